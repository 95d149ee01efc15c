package handlers

import (
	"encoding/json"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// flatSchema is what a tool schema says when all it says is: an object of
// a few named members, each a string (with a length bound or a set of
// values), an integer (with bounds) or a boolean, some of them required,
// no other member allowed. Most of the built-in tools' schemas say no
// more, and for those a value is checked here directly: the validator's
// walk over a small Read's args took 15 allocations and 5 µs of every
// call. A value flatSchema accepts the validator accepts too
// (FuzzFlatSchema); for anything else, and for every value it does not
// accept, the validator decides and words the error.
type flatSchema struct {
	required []string
	members  map[string]flatMember
}

type flatMember struct {
	kind     string // "string", "integer" or "boolean"
	min, max int    // string length in characters, or integer bounds
	hasMin   bool
	hasMax   bool
	enum     []string // for a string: its only allowed values
}

// newFlatSchema reads sc, or returns nil when it says more than
// flatSchema can check.
func newFlatSchema(sc *jsonschema.Schema) *flatSchema {
	if sc == nil || !plainKeywords(sc) || len(sc.Types) != 1 || sc.Types[0] != "object" ||
		sc.MinProperties != -1 || sc.MaxProperties != -1 || sc.PropertyNames != nil || len(sc.PatternProperties) != 0 ||
		sc.AdditionalProperties != false || len(sc.Dependencies) != 0 || len(sc.DependentRequired) != 0 ||
		len(sc.DependentSchemas) != 0 || sc.UnevaluatedProperties != nil {
		return nil
	}
	f := &flatSchema{required: sc.Required, members: map[string]flatMember{}}
	for name, p := range sc.Properties {
		m, ok := newFlatMember(p)
		if !ok {
			return nil
		}
		f.members[name] = m
	}
	for _, r := range sc.Required {
		if _, ok := f.members[r]; !ok {
			return nil
		}
	}
	return f
}

// plainKeywords says sc uses none of the keywords that apply to any kind
// of value, nor the array ones.
func plainKeywords(sc *jsonschema.Schema) bool {
	return sc.Format == "" && sc.Always == nil && sc.Ref == nil && sc.RecursiveRef == nil && sc.DynamicRef == nil &&
		len(sc.Constant) == 0 && sc.Not == nil && len(sc.AllOf) == 0 && len(sc.AnyOf) == 0 && len(sc.OneOf) == 0 &&
		sc.If == nil && sc.Pattern == nil && sc.ContentEncoding == "" && sc.ContentMediaType == "" && sc.ContentSchema == nil &&
		sc.ExclusiveMinimum == nil && sc.ExclusiveMaximum == nil && sc.MultipleOf == nil && len(sc.Extensions) == 0
}

func newFlatMember(p *jsonschema.Schema) (flatMember, bool) {
	if !plainKeywords(p) || len(p.Properties) != 0 || len(p.Required) != 0 || p.Items != nil || p.Items2020 != nil ||
		len(p.PrefixItems) != 0 || p.Contains != nil || p.MinItems != -1 || p.MaxItems != -1 {
		return flatMember{}, false
	}
	var m flatMember
	switch {
	case len(p.Types) == 0 && len(p.Enum) > 0:
		// An enum alone: only strings are taken here.
		m.kind = "string"
		for _, e := range p.Enum {
			s, ok := e.(string)
			if !ok {
				return flatMember{}, false
			}
			m.enum = append(m.enum, s)
		}
		if p.MinLength != -1 || p.MaxLength != -1 || p.Minimum != nil || p.Maximum != nil {
			return flatMember{}, false
		}
		return m, true
	case len(p.Types) != 1 || len(p.Enum) != 0:
		return flatMember{}, false
	}
	m.kind = p.Types[0]
	switch m.kind {
	case "string":
		if p.Minimum != nil || p.Maximum != nil {
			return flatMember{}, false
		}
		m.min, m.hasMin = p.MinLength, p.MinLength != -1
		m.max, m.hasMax = p.MaxLength, p.MaxLength != -1
	case "integer":
		if p.MinLength != -1 || p.MaxLength != -1 {
			return flatMember{}, false
		}
		var ok bool
		if p.Minimum != nil {
			if m.min, ok = ratInt(p.Minimum); !ok {
				return flatMember{}, false
			}
			m.hasMin = true
		}
		if p.Maximum != nil {
			if m.max, ok = ratInt(p.Maximum); !ok {
				return flatMember{}, false
			}
			m.hasMax = true
		}
	case "boolean":
		if p.MinLength != -1 || p.MaxLength != -1 || p.Minimum != nil || p.Maximum != nil {
			return flatMember{}, false
		}
	default:
		return flatMember{}, false
	}
	return m, true
}

// ratInt is r as an int, when it is a whole number that small.
func ratInt(r *big.Rat) (int, bool) {
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	n := r.Num().Int64()
	if int64(int(n)) != n {
		return 0, false
	}
	return int(n), true
}

// accepts says the value (as decodeAny gives it) certainly satisfies the
// schema; false means the validator must decide.
func (f *flatSchema) accepts(v any) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, r := range f.required {
		if _, ok := obj[r]; !ok {
			return false
		}
	}
	for name, val := range obj {
		m, ok := f.members[name]
		if !ok || !m.accepts(val) {
			return false
		}
	}
	return true
}

func (m flatMember) accepts(v any) bool {
	switch m.kind {
	case "string":
		s, ok := v.(string)
		if !ok {
			return false
		}
		if m.enum != nil {
			for _, e := range m.enum {
				if s == e {
					return true
				}
			}
			return false
		}
		if m.hasMin || m.hasMax {
			n := utf8.RuneCountInString(s)
			if m.hasMin && n < m.min || m.hasMax && n > m.max {
				return false
			}
		}
		return true
	case "integer":
		num, ok := v.(json.Number)
		if !ok {
			return false
		}
		// Plain digits only: 1.0 and 1e3 are integers to JSON Schema,
		// left to the validator (and checkIntegers).
		n, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil || int64(int(n)) != n {
			return false
		}
		return !(m.hasMin && int(n) < m.min || m.hasMax && int(n) > m.max)
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return false
}
