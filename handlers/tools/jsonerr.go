package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// JSONErrorText says what is wrong with a decoded value in the client's
// terms (JSON kinds and member names), never Go's type names.
func JSONErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	if te.Field == "" {
		return "the value must be " + jsonKind(te.Type)
	}
	return fmt.Sprintf("field %q must be %s", te.Field, jsonKind(te.Type))
}

// jsonKind names the JSON kind a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "of another kind"
}
