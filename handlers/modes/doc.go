// Package modes is the session's operating modes (design section 10):
// the matrix that says which tools a mode allows (Check), a delegate's
// rights by its subagent definition (CheckDelegate, ParseSubagents), and
// the mode tools that move a session between modes: EnterPlanMode and
// EnterGoalMode, SubmitPlan and SubmitGoal (Tools).
//
// It is cut out of handlers because the modes are the session's state
// machine, not the envelope's: the mode tools are typed tools of the one
// registry like any other, and what they need of the call that runs them
// (the session's other calls in flight, its mode gate) comes through the
// small Envelope interface. The envelope applies Check and CheckDelegate
// to every call before anything else, and again right before the body
// when the mode changed while the call waited.
package modes
