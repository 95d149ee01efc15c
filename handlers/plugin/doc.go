// Package plugin is the pure logic of hostcore's plugins: the rules a
// plugin's id, tool names, input schemas and skills follow, the check of a
// plugin directory (plugin.json and its skill folders, docs/plugins.md),
// its skeleton and its reproducible archive. plugins.register and the
// PluginCheck, PluginScaffold and PluginPack tools all judge a plugin by
// these rules, so a directory that passes PluginCheck registers as it
// says.
//
// The package does no path resolution of its own: a caller hands it an
// *os.Root opened at the plugin's directory (sandbox.OpenDir), and every
// file is read through it, so nothing outside that directory can be
// reached, whatever links the directory holds.
package plugin
