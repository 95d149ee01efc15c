package tools

import (
	"encoding/json"
	"errors"
	"fmt"

	"hostcore/rpc"
)

// JSONErrorText says what is wrong with a decoded value in the client's
// terms (JSON kinds and member names), never Go's type names.
func JSONErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	if te.Field == "" {
		return "the value must be " + rpc.JSONKind(te.Type)
	}
	return fmt.Sprintf("field %q must be %s", te.Field, rpc.JSONKind(te.Type))
}
