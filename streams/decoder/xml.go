package decoder

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tap-dev/tap/codec"
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
//
// Elements nest at most codec.MaxDepth levels, as JSON values do; a
// record element takes at most maxRecordText bytes of the body, and so
// does the text between two records.
type xmlReader struct {
	dec   *Decoder
	in    *budget
	x     *xml.Decoder
	path  []string
	depth int  // elements open above the record level
	match int  // how many of them match the path
	n     int  // records read
	inRec bool // reading a record's element
	err   error
}

// errXMLDepth is an xml body nested deeper than codec.MaxDepth.
var errXMLDepth = fmt.Errorf("is nested deeper than %d levels", codec.MaxDepth)

func newXMLReader(dec *Decoder, body io.Reader) *xmlReader {
	in := &budget{r: body, err: errRecordTooLarge}
	x := xml.NewDecoder(in)
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
	return &xmlReader{dec: dec, in: in, x: x, path: path}
}

func (r *xmlReader) Read() (any, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.read()
	switch {
	case err == nil || err == io.EOF:
	case errors.Is(err, errRecordTooLarge) && r.inRec:
		err = fmt.Errorf("stream %q: record %d of the xml body is larger than %d MiB", r.dec.stream, r.n+1, r.dec.maxRecord>>20)
	case errors.Is(err, errRecordTooLarge):
		err = fmt.Errorf("stream %q: the xml body has more than %d MiB of text outside a record", r.dec.stream, r.dec.maxRecord>>20)
	case errors.Is(err, errXMLDepth):
		err = fmt.Errorf("stream %q: the xml body %w", r.dec.stream, err)
	default:
		err = fmt.Errorf("stream %q: the xml body is not XML: %w", r.dec.stream, err)
	}
	if err != nil {
		r.err = err
	}
	return rec, err
}

func (r *xmlReader) read() (any, error) {
	if len(r.path) == 0 {
		return nil, fmt.Errorf("records_path is empty; for xml it names the root element and the record elements below it, e.g. \"items.item\"")
	}
	for {
		r.in.allow(r.x.InputOffset(), r.dec.maxRecord)
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
			if r.depth == codec.MaxDepth {
				return nil, errXMLDepth
			}
			if r.match == r.depth && r.depth < len(r.path) && name == r.path[r.depth] {
				if r.depth == len(r.path)-1 {
					r.inRec = true
					r.in.allow(r.x.InputOffset(), r.dec.maxRecord)
					v, err := r.element(t, r.dec.shape, r.depth+1)
					if err == nil {
						r.inRec = false
						r.n++
					}
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
// end. s is the schema of the value (nil: untyped); depth is how many
// elements are open, start's among them.
func (r *xmlReader) element(start xml.StartElement, s *shape, depth int) (any, error) {
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
			if depth == codec.MaxDepth {
				return nil, errXMLDepth
			}
			name := t.Name.Local
			cs := s.property(name)
			if cs.isArray() {
				cs = cs.items // each element is one item of the list
			}
			v, err := r.element(t, cs, depth+1)
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
