package manifest

// defaultTypes is the type the CDK gives a component written without one,
// by the field it sits in ("<parent type>.<field>"), as in its
// ManifestComponentTransformer. Only the places of components the tap
// may read are here; the others keep no type and are refused as such.
var defaultTypes = map[string]string{
	"CompositeErrorHandler.error_handlers":           "DefaultErrorHandler",
	"CursorPagination.decoder":                       "JsonDecoder",
	"DatetimeBasedCursor.end_datetime":               "MinMaxDatetime",
	"DatetimeBasedCursor.end_time_option":            "RequestOption",
	"DatetimeBasedCursor.start_datetime":             "MinMaxDatetime",
	"DatetimeBasedCursor.start_time_option":          "RequestOption",
	"DeclarativeSource.check":                        "CheckStream",
	"DeclarativeSource.spec":                         "Spec",
	"DeclarativeSource.streams":                      "DeclarativeStream",
	"DeclarativeStream.retriever":                    "SimpleRetriever",
	"DeclarativeStream.schema_loader":                "JsonFileSchemaLoader",
	"DynamicDeclarativeStream.stream_template":       "DeclarativeStream",
	"DefaultErrorHandler.response_filters":           "HttpResponseFilter",
	"DefaultPaginator.decoder":                       "JsonDecoder",
	"DefaultPaginator.page_size_option":              "RequestOption",
	"DpathExtractor.decoder":                         "JsonDecoder",
	"DpathExtractor.record_expander":                 "RecordExpander",
	"HttpRequester.error_handler":                    "DefaultErrorHandler",
	"ListPartitionRouter.request_option":             "RequestOption",
	"ParentStreamConfig.request_option":              "RequestOption",
	"ParentStreamConfig.stream":                      "DeclarativeStream",
	"RecordSelector.extractor":                       "DpathExtractor",
	"RecordSelector.record_filter":                   "RecordFilter",
	"SimpleRetriever.paginator":                      "NoPagination",
	"SimpleRetriever.record_selector":                "RecordSelector",
	"SimpleRetriever.requester":                      "HttpRequester",
	"SubstreamPartitionRouter.parent_stream_configs": "ParentStreamConfig",
	"AddFields.fields":                               "AddedFieldDefinition",
	"DynamicSchemaLoader.retriever":                  "SimpleRetriever",
	"StreamGroup.streams":                            "DeclarativeStream",
}

// customTypes is the type the CDK gives a component written with a
// class_name and no type, by its place.
var customTypes = map[string]string{
	"CompositeErrorHandler.backoff_strategies": "CustomBackoffStrategy",
	"DeclarativeStream.retriever":              "CustomRetriever",
	"DeclarativeStream.transformations":        "CustomTransformation",
	"DefaultErrorHandler.backoff_strategies":   "CustomBackoffStrategy",
	"DefaultPaginator.pagination_strategy":     "CustomPaginationStrategy",
	"HttpRequester.authenticator":              "CustomAuthenticator",
	"HttpRequester.error_handler":              "CustomErrorHandler",
	"RecordSelector.extractor":                 "CustomRecordExtractor",
	"SimpleRetriever.partition_router":         "CustomPartitionRouter",
}

// propagate gives every component its inferred type and its $parameters,
// as the CDK's transformer does: a component's parameters are its
// parent's with its own laid over them; each parameter is also set as a
// field of the component where the field is missing or empty; and a
// parameter named like a field holding an object is not passed into that
// object (the CDK's guard against a cycle). It returns a new tree; the
// input, whose parts references share, is not changed.
func propagate(field string, comp map[string]any, parent map[string]any) map[string]any {
	c := make(map[string]any, len(comp)+len(parent))
	for k, v := range comp {
		c[k] = v
	}
	if _, ok := c["type"]; !ok {
		types := defaultTypes
		if _, custom := c["class_name"]; custom {
			types = customTypes
		}
		if t, ok := types[field]; ok {
			c["type"] = t
		}
	}
	params := make(map[string]any, len(parent))
	for k, v := range parent {
		params[k] = v
	}
	if own, ok := c["$parameters"].(map[string]any); ok {
		for k, v := range own {
			params[k] = v
		}
	}
	delete(c, "$parameters")
	if isJSONSchema(c) {
		return c
	}
	typ, typed := c["type"].(string)
	if !typed {
		// Not a component: an object of fields, some of which may be
		// components (the CDK looks one level down).
		for _, k := range sortedKeys(c) {
			if m, ok := c[k].(map[string]any); ok && m["type"] != nil {
				c[k] = propagate(field, m, params)
			}
		}
		return c
	}
	for k, v := range params {
		if !truthy(c[k]) {
			c[k] = v
		}
	}
	for _, k := range sortedKeys(c) {
		switch v := c[k].(type) {
		case map[string]any:
			excluded, had := params[k]
			delete(params, k)
			c[k] = propagate(typ+"."+k, v, params)
			if had && truthy(excluded) {
				params[k] = excluded
			}
		case []any:
			excluded, had := params[k]
			delete(params, k)
			out := make([]any, len(v))
			for i, e := range v {
				if m, ok := e.(map[string]any); ok {
					out[i] = propagate(typ+"."+k, m, params)
				} else {
					out[i] = e
				}
			}
			c[k] = out
			if had && truthy(excluded) {
				params[k] = excluded
			}
		}
	}
	if len(params) > 0 {
		c["$parameters"] = params
	}
	return c
}

// isJSONSchema tells a JSON Schema (a stream's schema, the connector's
// spec) from a component: the CDK passes nothing into those.
func isJSONSchema(c map[string]any) bool {
	switch t := c["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return len(t) == 2 && t[0] == "null" && t[1] == "object"
	}
	return false
}

// truthy is Python's truth of a value: what `a or b` keeps.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int64:
		return x != 0
	case uint64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}
