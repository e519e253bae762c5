package pages

import (
	"maps"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

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
	p    streams.GraphQLOptions
	gql  *streams.GraphQL
}

func (g graphQLPaginator) pageSize() int {
	if g.p.PageSize > 0 {
		return g.p.PageSize
	}
	return defaultGraphQLPageSize
}

// First cannot fail: a body that is not a JSON object (which FirstRequest
// and WithVariable never produce) is replaced by a fresh one.
func (g graphQLPaginator) First(req streams.Request) streams.Request {
	body, err := streams.GraphQLBody(req.Body)
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

func (g graphQLPaginator) Next(last streams.Request, resp *streams.Response) (streams.Request, bool, error) {
	conn, found := streams.LookupNullable(resp.Body, g.gql.ConnectionPath)
	if !found {
		return streams.Request{}, false, streamErr(g.name, "connection_path %q is not in the response", g.gql.ConnectionPath)
	}
	if conn == nil {
		return streams.Request{}, false, nil
	}
	more, _ := streams.Lookup(conn, "pageInfo.hasNextPage")
	switch m := more.(type) {
	case nil:
		return streams.Request{}, false, nil
	case bool:
		if !m {
			return streams.Request{}, false, nil
		}
	default:
		return streams.Request{}, false, streamErr(g.name, "%s.pageInfo.hasNextPage holds a JSON %s, expected a boolean", g.gql.ConnectionPath, codec.TypeName(more))
	}
	cursor, _ := streams.Lookup(conn, "pageInfo.endCursor")
	c, ok := cursor.(string)
	if !ok || c == "" {
		return streams.Request{}, false, streamErr(g.name, "%s.pageInfo.hasNextPage is true but pageInfo.endCursor is %s; add endCursor to the query's pageInfo", g.gql.ConnectionPath, codec.TypeName(cursor))
	}
	next, err := last.WithVariable("after", c)
	if err != nil {
		return streams.Request{}, false, streamErr(g.name, "%v", err)
	}
	return next, true, nil
}

// defaultGraphQLPageSize is the variable "first" when page_size is unset.
const defaultGraphQLPageSize = 50
