package taptest

import (
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

// OrdersConfig is a config of two streams, incremental orders and its
// child items, with their schemas: what catalogs and stream maps are
// tested on.
func OrdersConfig() *settings.Config {
	return &settings.Config{
		Streams: []streams.Definition{
			{Name: "orders", PrimaryKey: []string{"id"}, ReplicationKey: "updated_at"},
			{Name: "items", PrimaryKey: []string{"id"}, Parent: &streams.Parent{Stream: "orders", Key: "id", As: "order_id"}},
		},
		Schemas: map[string]map[string]any{
			"orders": {"type": "object", "properties": map[string]any{"id": map[string]any{}, "updated_at": map[string]any{}, "amount": map[string]any{}, "note": map[string]any{}}},
			"items":  {"type": "object", "properties": map[string]any{"id": map[string]any{}, "order_id": map[string]any{}, "sku": map[string]any{}}},
		},
	}
}

// MappedConfig is OrdersConfig with orders aliased as sales, its note
// removed and a hash added, and copied, its id only, as orders_copy.
func MappedConfig() *settings.Config {
	cfg := OrdersConfig()
	cfg.Path = "config.json"
	cfg.StreamMaps = map[string]any{
		"orders":      map[string]any{"__alias__": "sales", "note": nil, "note_hash": "md5(str(note))"},
		"orders_copy": map[string]any{"__source__": "orders", "id": "id", "__else__": nil},
	}
	return cfg
}
