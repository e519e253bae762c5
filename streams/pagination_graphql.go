package streams

import (
	"maps"

	"github.com/tap-dev/tap/codec"
)

// PageGraphQL walks a Relay connection.
const PageGraphQL = "graphql"

// GraphQLOptions are the options of pagination type graphql; the query
// and the connection are the stream's "graphql" block.
type GraphQLOptions struct {
	// PageSize is the variable "first" (50 when unset).
	PageSize int `json:"page_size" lang:"min=0,default=50" doc:"variable first"`
}

func (*GraphQLOptions) pageType() string { return PageGraphQL }

// rules: the stream states its query.
func (*GraphQLOptions) rules() []rule {
	return []rule{{field: "graphql", msg: `needs "query" and "connection_path" for pagination type "graphql"`, need: set("graphql")}}
}

// boundsInVariables: the incremental bounds go into the query's
// variables, not the URL.
func (*GraphQLOptions) boundsInVariables() bool { return true }

// readsPage: the connection and its pageInfo, no record.
func (o *GraphQLOptions) readsPage(d *Definition) PageReads {
	if d.GraphQL == nil {
		return PageReads{}
	}
	c := d.GraphQL.ConnectionPath
	return PageReads{Envelope: []string{c, c + ".pageInfo"}}
}

func (o *GraphQLOptions) paginator(d *Definition) Paginator {
	return graphQLPaginator{name: d.Name, p: *o, gql: d.GraphQL}
}

func (*GraphQLOptions) doc() PageDoc {
	return PageDoc{Next: "variable `after` = `pageInfo.endCursor`", End: "`pageInfo.hasNextPage` false"}
}

// graphQLPaginator walks a Relay connection.
//
// First builds the POST body
//
//	{"query": Q, "variables": {...graphql.variables, ...variables already in the body, "first": page_size}}
//
// so the variables the caller set with WithVariable (an incremental lower
// bound, say) are kept. Next sets the variable "after" to
// pageInfo.endCursor of the connection at connection_path, and stops when
// pageInfo.hasNextPage is false or absent.
type graphQLPaginator struct {
	name string
	p    GraphQLOptions
	gql  *GraphQL
}

func (g graphQLPaginator) pageSize() int {
	if g.p.PageSize > 0 {
		return g.p.PageSize
	}
	return defaultGraphQLPageSize
}

// First cannot fail: a body that is not a JSON object (which FirstRequest
// and WithVariable never produce) is replaced by a fresh one.
func (g graphQLPaginator) First(req Request) Request {
	body, err := GraphQLBody(req.Body)
	if err != nil {
		body = map[string]any{}
	}
	vars := maps.Clone(g.gql.Variables)
	if vars == nil {
		vars = map[string]any{}
	}
	if have, ok := body["variables"].(map[string]any); ok {
		maps.Copy(vars, have)
	}
	vars["first"] = g.pageSize()
	body["query"] = g.gql.Query
	body["variables"] = vars
	b, err := codec.Marshal(body)
	if err != nil {
		// Only a variable that JSON cannot encode gets here; leave the
		// request as it was so the API reports the problem.
		return req
	}
	req.Method = "POST"
	req.Body = b
	return req
}

func (g graphQLPaginator) Next(last Request, resp *Page) (Request, bool, error) {
	conn, found := resp.Value(g.gql.ConnectionPath)
	if !found {
		return Request{}, false, streamErr(g.name, "connection_path %q is not in the response", g.gql.ConnectionPath)
	}
	if conn == nil {
		return Request{}, false, nil
	}
	info, _ := resp.Value(g.gql.ConnectionPath + ".pageInfo")
	more, _ := Lookup(info, "hasNextPage")
	switch m := more.(type) {
	case nil:
		return Request{}, false, nil
	case bool:
		if !m {
			return Request{}, false, nil
		}
	default:
		return Request{}, false, streamErr(g.name, "%s.pageInfo.hasNextPage holds a JSON %s, expected a boolean", g.gql.ConnectionPath, codec.TypeName(more))
	}
	cursor, _ := Lookup(info, "endCursor")
	c, ok := cursor.(string)
	if !ok || c == "" {
		return Request{}, false, streamErr(g.name, "%s.pageInfo.hasNextPage is true but pageInfo.endCursor is %s; add endCursor to the query's pageInfo", g.gql.ConnectionPath, codec.TypeName(cursor))
	}
	next, err := last.WithVariable("after", c)
	if err != nil {
		return Request{}, false, streamErr(g.name, "%v", err)
	}
	return next, true, nil
}

// defaultGraphQLPageSize is the variable "first" when page_size is unset.
const defaultGraphQLPageSize = 50
