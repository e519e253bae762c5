package manifest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Kind is one component type the tap implements: its name in the
// manifest, the role it plays, and the struct it decodes into.
type Kind struct {
	Type string
	Role string
	new  func() Component
}

// Fields lists the manifest fields the tap reads of the component, in the
// order of its struct.
func (k Kind) Fields() []string {
	t := reflect.TypeOf(k.new()).Elem()
	var out []string
	for i := range t.NumField() {
		if name, _, ok := fieldTag(t.Field(i)); ok {
			out = append(out, name)
		}
	}
	return out
}

// registry is every component type the tap implements: the decoder reads
// only these, and the docs' table of supported components is made from
// it (Kinds). A type not here is refused at load as not implemented.
var registry = []Kind{
	{"DeclarativeSource", "source", func() Component { return new(DeclarativeSource) }},
	{"Spec", "spec", func() Component { return new(Spec) }},
	{"CheckStream", "check", func() Component { return new(CheckStream) }},
	{"ConcurrencyLevel", "concurrency", func() Component { return new(ConcurrencyLevel) }},
	{"DeclarativeStream", "stream", func() Component { return new(DeclarativeStream) }},
	{"SimpleRetriever", "retriever", func() Component { return new(SimpleRetriever) }},
	{"HttpRequester", "requester", func() Component { return new(HttpRequester) }},
	{"RequestOption", "request option", func() Component { return new(RequestOption) }},
	{"RequestPath", "request option", func() Component { return new(RequestPath) }},
	{"RequestBodyJsonObject", "request body", func() Component { return new(RequestBodyJsonObject) }},
	{"RequestBodyUrlEncodedForm", "request body", func() Component { return new(RequestBodyUrlEncodedForm) }},
	{"RequestBodyPlainText", "request body", func() Component { return new(RequestBodyPlainText) }},
	{"RequestBodyGraphQL", "request body", func() Component { return new(RequestBodyGraphQL) }},
	{"NoAuth", "authenticator", func() Component { return new(NoAuth) }},
	{"ApiKeyAuthenticator", "authenticator", func() Component { return new(ApiKeyAuthenticator) }},
	{"BearerAuthenticator", "authenticator", func() Component { return new(BearerAuthenticator) }},
	{"BasicHttpAuthenticator", "authenticator", func() Component { return new(BasicHttpAuthenticator) }},
	{"OAuthAuthenticator", "authenticator", func() Component { return new(OAuthAuthenticator) }},
	{"SessionTokenAuthenticator", "authenticator", func() Component { return new(SessionTokenAuthenticator) }},
	{"ApiKey", "session token injection", func() Component { return new(SessionTokenAPIKey) }},
	{"Bearer", "session token injection", func() Component { return new(SessionTokenBearer) }},
	{"SelectiveAuthenticator", "authenticator", func() Component { return new(SelectiveAuthenticator) }},
	{"DefaultPaginator", "paginator", func() Component { return new(DefaultPaginator) }},
	{"NoPagination", "paginator", func() Component { return new(NoPagination) }},
	{"CursorPagination", "pagination strategy", func() Component { return new(CursorPagination) }},
	{"OffsetIncrement", "pagination strategy", func() Component { return new(OffsetIncrement) }},
	{"PageIncrement", "pagination strategy", func() Component { return new(PageIncrement) }},
	{"RecordSelector", "record selector", func() Component { return new(RecordSelector) }},
	{"DpathExtractor", "extractor", func() Component { return new(DpathExtractor) }},
	{"RecordFilter", "record filter", func() Component { return new(RecordFilter) }},
	{"DatetimeBasedCursor", "incremental sync", func() Component { return new(DatetimeBasedCursor) }},
	{"MinMaxDatetime", "datetime", func() Component { return new(MinMaxDatetime) }},
	{"SubstreamPartitionRouter", "partition router", func() Component { return new(SubstreamPartitionRouter) }},
	{"ParentStreamConfig", "parent stream", func() Component { return new(ParentStreamConfig) }},
	{"ListPartitionRouter", "partition router", func() Component { return new(ListPartitionRouter) }},
	{"AddFields", "transformation", func() Component { return new(AddFields) }},
	{"AddedFieldDefinition", "added field", func() Component { return new(AddedFieldDefinition) }},
	{"RemoveFields", "transformation", func() Component { return new(RemoveFields) }},
	{"DefaultErrorHandler", "error handler", func() Component { return new(DefaultErrorHandler) }},
	{"CompositeErrorHandler", "error handler", func() Component { return new(CompositeErrorHandler) }},
	{"HttpResponseFilter", "response filter", func() Component { return new(HttpResponseFilter) }},
	{"ExponentialBackoffStrategy", "backoff strategy", func() Component { return new(ExponentialBackoffStrategy) }},
	{"ConstantBackoffStrategy", "backoff strategy", func() Component { return new(ConstantBackoffStrategy) }},
	{"WaitTimeFromHeader", "backoff strategy", func() Component { return new(WaitTimeFromHeader) }},
	{"WaitUntilTimeFromHeader", "backoff strategy", func() Component { return new(WaitUntilTimeFromHeader) }},
	{"InlineSchemaLoader", "schema loader", func() Component { return new(InlineSchemaLoader) }},
	{"JsonFileSchemaLoader", "schema loader", func() Component { return new(JsonFileSchemaLoader) }},
	{"JsonDecoder", "decoder", func() Component { return new(JsonDecoder) }},
	{"HTTPAPIBudget", "API budget", func() Component { return new(HTTPAPIBudget) }},
	{"FixedWindowCallRatePolicy", "call rate policy", func() Component { return new(FixedWindowCallRatePolicy) }},
	{"MovingWindowCallRatePolicy", "call rate policy", func() Component { return new(MovingWindowCallRatePolicy) }},
	{"UnlimitedCallRatePolicy", "call rate policy", func() Component { return new(UnlimitedCallRatePolicy) }},
}

var (
	byType   = map[string]Kind{}
	byStruct = map[reflect.Type]Kind{}
)

func init() {
	for _, k := range registry {
		byType[k.Type] = k
		byStruct[reflect.TypeOf(k.new())] = k
	}
}

// Kinds is the registry in its order: the components the tap implements.
func Kinds() []Kind { return slices.Clone(registry) }

// Implemented reports whether the tap implements a component type.
func Implemented(typ string) bool {
	_, ok := byType[typ]
	return ok
}

// IsPython reports whether a component is Python code the tap cannot
// run: a Custom* type or one naming a class.
func IsPython(typ string, hasClassName bool) bool {
	return hasClassName || strings.HasPrefix(typ, "Custom")
}

// fieldTag reads a struct field's `m` tag: the manifest's name of the
// field and its option: "required", or "scalar" (an object there is a
// component the tap does not implement).
func fieldTag(f reflect.StructField) (name, opt string, ok bool) {
	tag, ok := f.Tag.Lookup("m")
	if !ok {
		return "", "", false
	}
	name, opt, _ = strings.Cut(tag, ",")
	return name, opt, true
}

// SupportedTable is the Markdown table of the components the tap
// implements, made from the registry: one row a type, with its role and
// the fields the tap reads of it.
func SupportedTable() string {
	var b strings.Builder
	b.WriteString("| component | role | fields read |\n|---|---|---|\n")
	for _, k := range registry {
		fields := k.Fields()
		for i, f := range fields {
			fields[i] = "`" + f + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Type, k.Role, strings.Join(fields, ", "))
	}
	return b.String()
}
