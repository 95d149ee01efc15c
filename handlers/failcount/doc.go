// Package failcount counts a session's failed mutations per prompt
// (design section 4d): a second failed Edit of one file, or a second
// failed patch command, within one prompt asks the agent's loop to stop
// instead of retrying.
//
// It is cut out of handlers because it is a bounded table with a rule
// of its own (which prompts' counts are kept) and nothing of the
// envelope; the session's runtime holds one and guards it.
package failcount
