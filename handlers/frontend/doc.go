// Package frontend is what a frontend (a transport other than hostcore's
// own JSON-RPC: rpc/mcp serves MCP) sees of hostcore's sessions: the one
// session it serves per workspace (SessionID, EnsureSession), the tools
// it lists (Serves), and the permission mode that would have spared a
// card it cannot show (ModeWithoutCard).
//
// It is cut out of handlers because these are the frontend's own rules;
// the door itself stays in handlers (frontend.go), since a frontend's call
// must take the very execute path of tools.execute, so containment, the
// permission policy, timeouts, review snapshots and the audit cannot
// differ between transports.
package frontend
