package decoder

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// xmlReader reads an XML body as it arrives (encoding/xml tokens). The
// records are the elements at records_path, which starts at the root
// element ("items.item" for <items><item>…</item></items>). A record is
// built from its element alone:
//
//   - child elements become properties, a repeated child an array;
//   - attributes become properties named "@name";
//   - a leaf element (no children, no attributes) is its text, a string
//     unless the schema types the property; an element with children or
//     attributes keeps non-blank text as "#text".
type xmlReader struct {
	dec   *Decoder
	x     *xml.Decoder
	path  []string
	depth int // elements open above the record level
	match int // how many of them match the path
	err   error
}

func newXMLReader(dec *Decoder, body io.Reader) *xmlReader {
	x := xml.NewDecoder(body)
	x.CharsetReader = func(charset string, input io.Reader) (io.Reader, error) {
		switch strings.ToLower(charset) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return input, nil
		}
		return nil, fmt.Errorf("charset %q is not supported (only UTF-8)", charset)
	}
	var path []string
	if dec.recordsPath != "" {
		path = strings.Split(dec.recordsPath, ".")
	}
	return &xmlReader{dec: dec, x: x, path: path}
}

func (r *xmlReader) Read() (any, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.read()
	if err != nil {
		if err != io.EOF {
			err = fmt.Errorf("stream %q: the xml body is not XML: %w", r.dec.stream, err)
		}
		r.err = err
	}
	return rec, err
}

func (r *xmlReader) read() (any, error) {
	if len(r.path) == 0 {
		return nil, fmt.Errorf("records_path is empty; for xml it names the root element and the record elements below it, e.g. \"items.item\"")
	}
	for {
		tok, err := r.x.Token()
		if err == io.EOF && r.depth != 0 {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if r.depth == 0 && name != r.path[0] {
				return nil, fmt.Errorf("the root element is <%s>, but records_path %q starts with %q", name, r.dec.recordsPath, r.path[0])
			}
			if r.match == r.depth && r.depth < len(r.path) && name == r.path[r.depth] {
				if r.depth == len(r.path)-1 {
					v, err := r.element(t, r.dec.shape)
					return v, err
				}
				r.match++
			}
			r.depth++
		case xml.EndElement:
			r.depth--
			if r.match > r.depth {
				r.match = r.depth
			}
		}
	}
}

// element builds the value of the element start opened, reading up to its
// end. s is the schema of the value (nil: untyped).
func (r *xmlReader) element(start xml.StartElement, s *shape) (any, error) {
	var (
		names    []string         // child names in order of first appearance
		children map[string][]any // by name
		text     strings.Builder
	)
	for {
		tok, err := r.x.Token()
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			cs := s.property(name)
			if cs.isArray() {
				cs = cs.items // each element is one item of the list
			}
			v, err := r.element(t, cs)
			if err != nil {
				return nil, err
			}
			if children == nil {
				children = map[string][]any{}
			}
			if _, ok := children[name]; !ok {
				names = append(names, name)
			}
			children[name] = append(children[name], v)
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if len(children) == 0 && len(start.Attr) == 0 {
				return s.coerceText(text.String()), nil
			}
			props := make(map[string]any, len(names)+len(start.Attr)+1)
			for _, a := range start.Attr {
				k := "@" + a.Name.Local
				props[k] = s.property(k).coerceText(a.Value)
			}
			for _, name := range names {
				vs := children[name]
				if len(vs) == 1 && !s.property(name).isArray() {
					props[name] = vs[0]
				} else {
					props[name] = vs
				}
			}
			if t := strings.TrimSpace(text.String()); t != "" {
				props["#text"] = s.property("#text").coerceText(t)
			}
			return props, nil
		}
	}
}
