package manifest

// The typed model of the components the tap runs. Each struct is one
// component type of Airbyte's declarative_component_schema.yaml; its
// fields carry the schema's names in their `m` tags ("name" or
// "name,required"), and the registry (registry.go) decodes a manifest's
// node into it by those tags. A field of an interface type holds any
// component of that role (an Authenticator, a PaginationStrategy, …); an
// Expr holds an interpolated string, compiled once at load.

// Node is what every component carries: its type, where it sits in the
// manifest, and the $parameters passed down to it.
type Node struct {
	Type       string
	Path       string
	Parameters map[string]any
}

func (n *Node) node() *Node { return n }

// Component is any decoded component.
type Component interface{ node() *Node }

// The roles a component plays: a field of one of these types accepts
// every registered component of the role, and a component of another
// role is bad input.
type (
	Retriever interface {
		Component
		retriever()
	}
	Requester interface {
		Component
		requester()
	}
	Authenticator interface {
		Component
		authenticator()
	}
	Paginator interface {
		Component
		paginator()
	}
	PaginationStrategy interface {
		Component
		paginationStrategy()
	}
	Extractor interface {
		Component
		extractor()
	}
	IncrementalSync interface {
		Component
		incrementalSync()
	}
	PartitionRouter interface {
		Component
		partitionRouter()
	}
	Transformation interface {
		Component
		transformation()
	}
	ErrorHandler interface {
		Component
		errorHandler()
	}
	BackoffStrategy interface {
		Component
		backoffStrategy()
	}
	SchemaLoader interface {
		Component
		schemaLoader()
	}
	Decoder interface {
		Component
		decoder()
	}
	RequestBody interface {
		Component
		requestBody()
	}
	// TokenInjector is how a SessionTokenAuthenticator sends its token.
	TokenInjector interface {
		Component
		tokenInjector()
	}
)

// DeclarativeSource is the manifest's root.
type DeclarativeSource struct {
	Node
	Version          string               `m:"version"`
	Description      string               `m:"description"`
	Streams          []*DeclarativeStream `m:"streams"`
	Check            *CheckStream         `m:"check"`
	Spec             *Spec                `m:"spec"`
	ConcurrencyLevel *ConcurrencyLevel    `m:"concurrency_level"`
	APIBudget        *HTTPAPIBudget       `m:"api_budget"`
	// Blocks read only through $ref, and the Connector Builder's own.
	Definitions any `m:"definitions"`
	Schemas     any `m:"schemas"`
	Metadata    any `m:"metadata"`
}

// Spec is the connector's spec: its config's JSON Schema.
type Spec struct {
	Node
	ConnectionSpecification  map[string]any `m:"connection_specification,required"`
	DocumentationURL         string         `m:"documentation_url"`
	AdvancedAuth             any            `m:"advanced_auth"`
	ConfigNormalizationRules any            `m:"config_normalization_rules"`
}

// CheckStream names the streams `check` reads a page of.
type CheckStream struct {
	Node
	StreamNames []string `m:"stream_names"`
}

// ConcurrencyLevel is accepted and read as a hint: the tap's own settings
// decide how many requests are in flight.
type ConcurrencyLevel struct {
	Node
	DefaultConcurrency Expr `m:"default_concurrency,required"`
	MaxConcurrency     int  `m:"max_concurrency"`
}

// DeclarativeStream is one stream.
type DeclarativeStream struct {
	Node
	Name            string           `m:"name"`
	Retriever       Retriever        `m:"retriever,required"`
	IncrementalSync IncrementalSync  `m:"incremental_sync"`
	PrimaryKey      PrimaryKey       `m:"primary_key"`
	SchemaLoader    []SchemaLoader   `m:"schema_loader"`
	Transformations []Transformation `m:"transformations"`
}

// PrimaryKey is a stream's key: a field, a list of fields, or a list of
// paths (a composite key of nested fields); always paths here.
type PrimaryKey [][]string

// SimpleRetriever requests pages and selects their records.
type SimpleRetriever struct {
	Node
	Requester       Requester         `m:"requester,required"`
	RecordSelector  *RecordSelector   `m:"record_selector,required"`
	Paginator       Paginator         `m:"paginator"`
	PartitionRouter []PartitionRouter `m:"partition_router"`
	Decoder         Decoder           `m:"decoder"`
	// IgnoreSliceParamsOnPages drops the partition's and the window's
	// request options from the requests of the second page on.
	IgnoreSliceParamsOnPages bool `m:"ignore_stream_slicer_parameters_on_paginated_requests"`
}

// HttpRequester is how a page is requested.
type HttpRequester struct {
	Node
	URLBase       Expr          `m:"url_base"`
	Path          Expr          `m:"path"`
	URL           Expr          `m:"url"`
	Method        string        `m:"http_method"`
	Authenticator Authenticator `m:"authenticator"`
	RequestParams Value         `m:"request_parameters"`
	Headers       Value         `m:"request_headers"`
	BodyJSON      Value         `m:"request_body_json"`
	BodyData      Value         `m:"request_body_data"`
	Body          RequestBody   `m:"request_body"`
	ErrorHandler  ErrorHandler  `m:"error_handler"`
	UseCache      bool          `m:"use_cache"`
}

// RequestBodyJsonObject is a JSON body.
type RequestBodyJsonObject struct {
	Node
	Value Value `m:"value,required"`
}

// RequestBodyUrlEncodedForm is a form body.
type RequestBodyUrlEncodedForm struct {
	Node
	Value Value `m:"value,required"`
}

// RequestBodyPlainText is a text body.
type RequestBodyPlainText struct {
	Node
	Value Expr `m:"value,required"`
}

// RequestBodyGraphQL is a GraphQL query sent as a JSON body.
type RequestBodyGraphQL struct {
	Node
	Value *GraphQLQuery `m:"value,required"`
}

// GraphQLQuery is the query of a RequestBodyGraphQL.
type GraphQLQuery struct {
	Query Expr `m:"query,required"`
}

// RequestOption says where a value goes in a request.
type RequestOption struct {
	Node
	InjectInto string `m:"inject_into,required"`
	FieldName  Expr   `m:"field_name"`
	FieldPath  []Expr `m:"field_path"`
}

// RequestPath puts a page token in the path: the token is the next URL.
type RequestPath struct{ Node }

// ApiKeyAuthenticator sends a key in a header or a request option.
type ApiKeyAuthenticator struct {
	Node
	APIToken   Expr           `m:"api_token"`
	Header     Expr           `m:"header"`
	InjectInto *RequestOption `m:"inject_into"`
}

// BearerAuthenticator sends "Authorization: Bearer <token>".
type BearerAuthenticator struct {
	Node
	APIToken Expr `m:"api_token,required"`
}

// BasicHttpAuthenticator sends HTTP basic authentication.
type BasicHttpAuthenticator struct {
	Node
	Username Expr `m:"username,required"`
	Password Expr `m:"password"`
}

// NoAuth sends nothing.
type NoAuth struct{ Node }

// OAuthAuthenticator refreshes an access token (refresh token or client
// credentials grant) and sends it as a bearer token.
type OAuthAuthenticator struct {
	Node
	ClientIDName            Expr                 `m:"client_id_name"`
	ClientID                Expr                 `m:"client_id"`
	ClientSecretName        Expr                 `m:"client_secret_name"`
	ClientSecret            Expr                 `m:"client_secret"`
	RefreshTokenName        Expr                 `m:"refresh_token_name"`
	RefreshToken            Expr                 `m:"refresh_token"`
	TokenRefreshEndpoint    Expr                 `m:"token_refresh_endpoint"`
	AccessTokenName         Expr                 `m:"access_token_name"`
	AccessTokenValue        Expr                 `m:"access_token_value"`
	ExpiresInName           Expr                 `m:"expires_in_name"`
	GrantTypeName           Expr                 `m:"grant_type_name"`
	GrantType               Expr                 `m:"grant_type"`
	RefreshRequestBody      Value                `m:"refresh_request_body"`
	RefreshRequestHeaders   Value                `m:"refresh_request_headers"`
	RefreshAsQueryParams    bool                 `m:"send_refresh_request_as_query_params"`
	Scopes                  []string             `m:"scopes"`
	TokenExpiryDate         Expr                 `m:"token_expiry_date"`
	TokenExpiryDateFormat   string               `m:"token_expiry_date_format"`
	RefreshErrorStatusCodes []int                `m:"refresh_token_error_status_codes"`
	RefreshErrorKey         string               `m:"refresh_token_error_key"`
	RefreshErrorValues      []string             `m:"refresh_token_error_values"`
	RefreshTokenUpdater     *RefreshTokenUpdater `m:"refresh_token_updater"`
}

// RefreshTokenUpdater writes a rotated refresh token back to the config.
type RefreshTokenUpdater struct {
	RefreshTokenName             string   `m:"refresh_token_name"`
	AccessTokenConfigPath        []string `m:"access_token_config_path"`
	RefreshTokenConfigPath       []string `m:"refresh_token_config_path"`
	TokenExpiryDateConfigPath    []string `m:"token_expiry_date_config_path"`
	RefreshTokenErrorStatusCodes []int    `m:"refresh_token_error_status_codes"`
	RefreshTokenErrorKey         string   `m:"refresh_token_error_key"`
	RefreshTokenErrorValues      []string `m:"refresh_token_error_values"`
}

// SessionTokenAuthenticator logs in with one request and sends the token
// it answers with.
type SessionTokenAuthenticator struct {
	Node
	LoginRequester        *HttpRequester `m:"login_requester,required"`
	SessionTokenPath      []string       `m:"session_token_path,required"`
	ExpirationDuration    string         `m:"expiration_duration"`
	RequestAuthentication TokenInjector  `m:"request_authentication,required"`
	Decoder               Decoder        `m:"decoder"`
}

// SessionTokenAPIKey sends the session token as an API key (type "ApiKey").
type SessionTokenAPIKey struct {
	Node
	InjectInto *RequestOption `m:"inject_into,required"`
}

// SessionTokenBearer sends the session token as a bearer token (type "Bearer").
type SessionTokenBearer struct{ Node }

// SelectiveAuthenticator picks one authenticator by a value of the config.
type SelectiveAuthenticator struct {
	Node
	SelectionPath  []string                 `m:"authenticator_selection_path,required"`
	Authenticators map[string]Authenticator `m:"authenticators,required"`
}

// DefaultPaginator pages with a strategy and puts its token and page size
// into the request.
type DefaultPaginator struct {
	Node
	Strategy        PaginationStrategy `m:"pagination_strategy,required"`
	PageSizeOption  *RequestOption     `m:"page_size_option"`
	PageTokenOption Component          `m:"page_token_option"` // *RequestOption or *RequestPath
	URLBase         Expr               `m:"url_base"`
	Decoder         Decoder            `m:"decoder"`
}

// NoPagination reads one page.
type NoPagination struct{ Node }

// CursorPagination takes the next page's token from the last answer.
type CursorPagination struct {
	Node
	CursorValue   Expr    `m:"cursor_value,required"`
	PageSize      Expr    `m:"page_size"`
	StopCondition Cond    `m:"stop_condition"`
	Decoder       Decoder `m:"decoder"`
}

// OffsetIncrement pages by record offset.
type OffsetIncrement struct {
	Node
	PageSize             Expr `m:"page_size"`
	InjectOnFirstRequest bool `m:"inject_on_first_request"`
}

// PageIncrement pages by page number.
type PageIncrement struct {
	Node
	PageSize             Expr `m:"page_size"`
	StartFromPage        *int `m:"start_from_page"` // nil: 1, the CDK's default
	InjectOnFirstRequest bool `m:"inject_on_first_request"`
}

// RecordSelector extracts a page's records and filters them.
type RecordSelector struct {
	Node
	Extractor                Extractor     `m:"extractor,required"`
	RecordFilter             *RecordFilter `m:"record_filter"`
	SchemaNormalization      string        `m:"schema_normalization,scalar"`
	TransformBeforeFiltering bool          `m:"transform_before_filtering"`
}

// DpathExtractor takes the records at a path of the answer ("*" matches
// every key or item).
type DpathExtractor struct {
	Node
	FieldPath []Expr  `m:"field_path,required"`
	Decoder   Decoder `m:"decoder"`
}

// RecordFilter keeps the records for which its condition holds.
type RecordFilter struct {
	Node
	Condition Cond `m:"condition"`
}

// DatetimeBasedCursor windows a stream by a datetime field.
type DatetimeBasedCursor struct {
	Node
	CursorField             Expr            `m:"cursor_field,required"`
	DatetimeFormat          string          `m:"datetime_format,required"`
	CursorDatetimeFormats   []string        `m:"cursor_datetime_formats"`
	StartDatetime           *MinMaxDatetime `m:"start_datetime,required"`
	EndDatetime             *MinMaxDatetime `m:"end_datetime"`
	StartTimeOption         *RequestOption  `m:"start_time_option"`
	EndTimeOption           *RequestOption  `m:"end_time_option"`
	Step                    Expr            `m:"step"`
	CursorGranularity       string          `m:"cursor_granularity"`
	LookbackWindow          Expr            `m:"lookback_window"`
	PartitionFieldStart     string          `m:"partition_field_start"`
	PartitionFieldEnd       string          `m:"partition_field_end"`
	IsDataFeed              bool            `m:"is_data_feed"`
	IsClientSideIncremental bool            `m:"is_client_side_incremental"`
	IsCompareStrictly       bool            `m:"is_compare_strictly"`
	GlobalSubstreamCursor   bool            `m:"global_substream_cursor"`
}

// MinMaxDatetime is a datetime with optional bounds; a bare string in the
// manifest is its datetime.
type MinMaxDatetime struct {
	Node
	Datetime       Expr   `m:"datetime,required"`
	DatetimeFormat string `m:"datetime_format"`
	MinDatetime    Expr   `m:"min_datetime"`
	MaxDatetime    Expr   `m:"max_datetime"`
}

// SubstreamPartitionRouter makes a partition of every record of parent
// streams.
type SubstreamPartitionRouter struct {
	Node
	ParentStreamConfigs []*ParentStreamConfig `m:"parent_stream_configs,required"`
}

// ParentStreamConfig is one parent of a SubstreamPartitionRouter.
type ParentStreamConfig struct {
	Node
	Stream                *DeclarativeStream `m:"stream,required"`
	ParentKey             Expr               `m:"parent_key,required"`
	PartitionField        Expr               `m:"partition_field,required"`
	RequestOption         *RequestOption     `m:"request_option"`
	IncrementalDependency bool               `m:"incremental_dependency"`
	ExtraFields           [][]string         `m:"extra_fields"`
	LazyReadPointer       []Expr             `m:"lazy_read_pointer"`
}

// ListPartitionRouter makes a partition of every value of a list.
type ListPartitionRouter struct {
	Node
	CursorField   Expr           `m:"cursor_field,required"`
	Values        Value          `m:"values,required"` // a list, or an expression giving one
	RequestOption *RequestOption `m:"request_option"`
}

// AddFields adds fields to every record.
type AddFields struct {
	Node
	Fields    []*AddedFieldDefinition `m:"fields,required"`
	Condition Cond                    `m:"condition"`
}

// AddedFieldDefinition is one field AddFields adds.
type AddedFieldDefinition struct {
	Node
	Path      []string `m:"path,required"`
	Value     Expr     `m:"value,required"`
	ValueType string   `m:"value_type"`
}

// RemoveFields removes fields from every record.
type RemoveFields struct {
	Node
	FieldPointers [][]string `m:"field_pointers,required"`
	Condition     Cond       `m:"condition"`
}

// DefaultErrorHandler decides what an answer means and how long to wait.
type DefaultErrorHandler struct {
	Node
	BackoffStrategies []BackoffStrategy     `m:"backoff_strategies"`
	MaxRetries        Expr                  `m:"max_retries"`
	ResponseFilters   []*HttpResponseFilter `m:"response_filters"`
}

// CompositeErrorHandler asks its handlers in turn.
type CompositeErrorHandler struct {
	Node
	ErrorHandlers []ErrorHandler `m:"error_handlers,required"`
}

// HttpResponseFilter matches answers and says what to do with them.
type HttpResponseFilter struct {
	Node
	Action               string `m:"action"`
	FailureType          string `m:"failure_type"`
	ErrorMessage         Expr   `m:"error_message"`
	ErrorMessageContains string `m:"error_message_contains"`
	HTTPCodes            []int  `m:"http_codes"`
	Predicate            Cond   `m:"predicate"`
}

// ExponentialBackoffStrategy waits factor·2^attempt seconds.
type ExponentialBackoffStrategy struct {
	Node
	Factor Expr `m:"factor"`
}

// ConstantBackoffStrategy waits a fixed time.
type ConstantBackoffStrategy struct {
	Node
	BackoffTimeInSeconds Expr `m:"backoff_time_in_seconds,required"`
}

// WaitTimeFromHeader waits the seconds a header gives.
type WaitTimeFromHeader struct {
	Node
	Header                  Expr   `m:"header,required"`
	Regex                   string `m:"regex"`
	MaxWaitingTimeInSeconds Expr   `m:"max_waiting_time_in_seconds"`
}

// WaitUntilTimeFromHeader waits until the time a header gives.
type WaitUntilTimeFromHeader struct {
	Node
	Header                  Expr   `m:"header,required"`
	MinWait                 Expr   `m:"min_wait"`
	Regex                   string `m:"regex"`
	MaxWaitingTimeInSeconds Expr   `m:"max_waiting_time_in_seconds"`
}

// InlineSchemaLoader is a schema written in the manifest.
type InlineSchemaLoader struct {
	Node
	Schema map[string]any `m:"schema"`
}

// JsonFileSchemaLoader reads a schema file next to the manifest.
type JsonFileSchemaLoader struct {
	Node
	FilePath Expr `m:"file_path"`
}

// HTTPAPIBudget is the API's rate limits as the manifest states them:
// the requests matching a policy's matchers share its limit.
type HTTPAPIBudget struct {
	Node
	Policies                   []CallRatePolicy `m:"policies,required"`
	RatelimitResetHeader       string           `m:"ratelimit_reset_header"`
	RatelimitRemainingHeader   string           `m:"ratelimit_remaining_header"`
	StatusCodesForRatelimitHit []int            `m:"status_codes_for_ratelimit_hit"`
}

// CallRatePolicy is one policy of an HTTPAPIBudget.
type CallRatePolicy interface {
	Component
	callRatePolicy()
}

// FixedWindowCallRatePolicy allows call_limit requests a period.
type FixedWindowCallRatePolicy struct {
	Node
	Period    Expr              `m:"period,required"`
	CallLimit int               `m:"call_limit,required"`
	Matchers  []*RequestMatcher `m:"matchers,required"`
}

// MovingWindowCallRatePolicy allows each rate's limit in any window of
// its interval.
type MovingWindowCallRatePolicy struct {
	Node
	Rates    []*Rate           `m:"rates,required"`
	Matchers []*RequestMatcher `m:"matchers,required"`
}

// UnlimitedCallRatePolicy sets no limit on the requests it matches.
type UnlimitedCallRatePolicy struct {
	Node
	Matchers []*RequestMatcher `m:"matchers,required"`
}

// Rate is a limit an interval (an ISO 8601 duration).
type Rate struct {
	Limit    Expr   `m:"limit,required"`
	Interval string `m:"interval,required"`
}

// RequestMatcher says which requests a policy counts (an
// HttpRequestRegexMatcher; none given matches every request).
type RequestMatcher struct {
	Method         string `m:"method"`
	URLBase        string `m:"url_base"`
	URLPathPattern string `m:"url_path_pattern"`
	Params         any    `m:"params"`
	Headers        any    `m:"headers"`
	Weight         Expr   `m:"weight"`
}

// JsonDecoder reads an answer as JSON.
type JsonDecoder struct{ Node }

func (*SimpleRetriever) retriever()                  {}
func (*HttpRequester) requester()                    {}
func (*ApiKeyAuthenticator) authenticator()          {}
func (*BearerAuthenticator) authenticator()          {}
func (*BasicHttpAuthenticator) authenticator()       {}
func (*NoAuth) authenticator()                       {}
func (*OAuthAuthenticator) authenticator()           {}
func (*SessionTokenAuthenticator) authenticator()    {}
func (*SelectiveAuthenticator) authenticator()       {}
func (*SessionTokenAPIKey) tokenInjector()           {}
func (*SessionTokenBearer) tokenInjector()           {}
func (*DefaultPaginator) paginator()                 {}
func (*NoPagination) paginator()                     {}
func (*CursorPagination) paginationStrategy()        {}
func (*OffsetIncrement) paginationStrategy()         {}
func (*PageIncrement) paginationStrategy()           {}
func (*DpathExtractor) extractor()                   {}
func (*DatetimeBasedCursor) incrementalSync()        {}
func (*SubstreamPartitionRouter) partitionRouter()   {}
func (*ListPartitionRouter) partitionRouter()        {}
func (*AddFields) transformation()                   {}
func (*RemoveFields) transformation()                {}
func (*DefaultErrorHandler) errorHandler()           {}
func (*CompositeErrorHandler) errorHandler()         {}
func (*ExponentialBackoffStrategy) backoffStrategy() {}
func (*ConstantBackoffStrategy) backoffStrategy()    {}
func (*WaitTimeFromHeader) backoffStrategy()         {}
func (*WaitUntilTimeFromHeader) backoffStrategy()    {}
func (*InlineSchemaLoader) schemaLoader()            {}
func (*JsonFileSchemaLoader) schemaLoader()          {}
func (*JsonDecoder) decoder()                        {}
func (*FixedWindowCallRatePolicy) callRatePolicy()   {}
func (*MovingWindowCallRatePolicy) callRatePolicy()  {}
func (*UnlimitedCallRatePolicy) callRatePolicy()     {}
func (*RequestBodyJsonObject) requestBody()          {}
func (*RequestBodyUrlEncodedForm) requestBody()      {}
func (*RequestBodyPlainText) requestBody()           {}
func (*RequestBodyGraphQL) requestBody()             {}
