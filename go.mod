module github.com/tap-dev/tap

go 1.26.0

require (
	github.com/expr-lang/expr v1.17.8
	github.com/gobwas/ws v1.5.0
	github.com/google/go-cmp v0.7.0
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/jackc/pgx/v5 v5.12.0
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	go.yaml.in/yaml/v4 v4.0.0
	golang.org/x/oauth2 v0.38.0
	golang.org/x/sync v0.22.0
	golang.org/x/time v0.16.0
)

require (
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)
