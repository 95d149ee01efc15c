// Package shells is the command shell a session's Bash runs in, as the
// settings and the wire see it: whether a catalog id is available here,
// which shell is in effect when the persisted default is not (design
// section 5), and shells.list's answer.
//
// It is cut out of handlers because it is a rule over sandbox/process's
// catalog with nothing of the envelope; handlers reads the persisted
// default and hands it over.
package shells
