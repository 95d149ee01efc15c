package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hostcore/perms/redact"
	"hostcore/rpc"
	"time"
)

// Plugin is a plugin's tool (design section 11): its args go to the
// client as they came, in plugin.invoke, and its reply comes back as the
// result; timeout bounds the call.
func Plugin(spec Spec, timeout time.Duration) *Def {
	return Tool[json.RawMessage, json.RawMessage]{Spec: spec, Run: runPlugin(spec.PluginID, spec.PluginTool, timeout)}.Def()
}

// Bounds of a plugin's reply.
const (
	pluginOutputMax  = 256 << 10
	pluginDetailsMax = 64 << 10
)

// pluginReply is the client's answer to plugin.invoke.
type pluginReply struct {
	Content *[]Content      `json:"content"` // required (PROTOCOL section 5)
	IsError bool            `json:"isError"`
	Details json.RawMessage `json:"details"`
}

// runPlugin runs a plugin tool by asking the client (design section 11):
// by the time it runs the envelope has validated the args against the
// registered schema and applied the mode matrix and permission policy.
// The args go to the client as they came; its details come back as they
// are, when small enough.
func runPlugin(pluginID, tool string, timeout time.Duration) func(ctx context.Context, c *Call, args json.RawMessage) (Out[json.RawMessage], error) {
	return func(ctx context.Context, c *Call, args json.RawMessage) (Out[json.RawMessage], error) {
		var none Out[json.RawMessage]
		tctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var reply pluginReply
		err := c.Host.Request(tctx, "plugin.invoke", map[string]any{
			"sessionId": c.SessionID, "toolCallId": c.ToolCallID, "pluginId": pluginID, "toolName": tool, "args": args,
		}, &reply)
		switch {
		case err != nil && ctx.Err() != nil:
			return none, ErrAborted
		case err != nil && tctx.Err() != nil:
			return none, Fail(CodeToolTimeout, "plugin tool %s did not answer within %s", c.Name, timeout)
		case err != nil:
			return none, Fail(CodeToolFailed, "plugin tool %s failed: %s", c.Name, replyErrorText(err))
		case reply.Content == nil:
			// {"foo":1} or null was taken for an empty success.
			return none, Fail(CodeToolFailed, "plugin tool %s failed: its reply is malformed: content is required (an array of {type, text})", c.Name)
		}
		content := make([]Content, 0, len(*reply.Content))
		budget := pluginOutputMax
		for _, b := range *reply.Content {
			if b.Type == "" {
				b.Type = "text"
			}
			if b.Type != "text" {
				// Only text reaches the model (PROTOCOL section 5: {type,
				// text}); an image's data was dropped without a word.
				b.Type, b.Text = "text", fmt.Sprintf("[a block of type %q from the plugin, not shown: only text is passed on]", redact.EscapeText(CutAt(b.Type, 64)))
			}
			if len(b.Text) > budget {
				b.Text = CutAt(b.Text, budget) + "\n…[output cut]"
				content = append(content, b)
				break
			}
			budget -= len(b.Text)
			content = append(content, b)
		}
		var details json.RawMessage
		if d := bytes.TrimSpace(reply.Details); len(d) > 0 && string(d) != "null" && len(d) <= pluginDetailsMax {
			details = d
		}
		if reply.IsError {
			msg := "plugin tool " + c.Name + " reported an error"
			if len(content) > 0 && content[0].Text != "" {
				msg = redact.Preview(content[0].Text, redact.PreviewMax)
			}
			f := &Failure{Code: CodeToolFailed, Message: msg, Content: content}
			if details != nil {
				f.Details = details
			}
			return none, f
		}
		return Out[json.RawMessage]{Content: content, Details: details}, nil
	}
}

// replyErrorText says why a plugin call failed: an error the client sent,
// or a reply of the wrong shape, named in JSON terms.
func replyErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "its reply is malformed: " + JSONErrorText(err)
	}
	// The client's own message, redacted like every text hostcore
	// passes on from a tool.
	msg := err.Error()
	var re *rpc.Error
	if errors.As(err, &re) {
		msg = re.Message
	}
	return redact.Preview(msg, redact.PreviewMax)
}
