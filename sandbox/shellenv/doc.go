// Package shellenv gives Bash commands the login profile's environment
// without running the profile for each of them.
//
// A login profile that runs `pyenv init`, nvm or conda costs half a
// second or more; `bash -lc` pays it on every command. Take runs the
// login shell once (`bash -l`, bounded: DefaultTimeout, its process tree
// killed at the bound) and captures what the profile left: the exported
// variables, the functions, the aliases and the glob options. Beside it,
// the $SHELL login PATH is probed (`$SHELL -lic`, DefaultProbeTimeout),
// because nvm, pnpm or Homebrew are often set up in zsh files that
// bash never reads; its entries come first in every command's PATH.
//
// # How a command runs
//
// Snapshot.Command gives `bash -c <command>`, the command exactly as
// typed: $0, $#, line numbers and syntax errors are those of bash -c. The
// snapshot reaches it two ways:
//
//   - The environment: hostcore's, with the profile's changes applied
//     (variables set, changed or unset), PATH being the probed entries,
//     then the profile's, then hostcore's the profile dropped. Values
//     travel as bytes: newlines, quotes, '$', backslashes and invalid
//     UTF-8 arrive unchanged. Variables bash sets for itself (SHLVL, PWD,
//     OLDPWD, _), its option variables (SHELLOPTS, BASHOPTS, BASH_*) and
//     hostcore's (HOSTCORE_*) are not the profile's and are not carried.
//     A read-only variable arrives as an ordinary one.
//   - A restore script, named by BASH_ENV, which a non-interactive bash
//     reads before it parses the -c string: the aliases, the functions
//     (with extglob on while they are read, so bodies that use its
//     patterns parse), `shopt -s expand_aliases`, the glob options, then
//     the user's own BASH_ENV and POSIXLY_CORRECT put back (they travel
//     under HOSTCORE_SNAPSHOT_*: bash would act on them at start), then
//     the start mark (Started). Since the aliases exist before the
//     command is parsed, they expand in it, from its first line.
//
// The script holds no variables (those travel in the environment), runs
// none of the profile's code and prints nothing; Take checks the last by
// running `true` through it, and fails rather than hand out a snapshot
// whose restore prints or that bash does not read (a bash run as sh).
// It is written 0600 in the directory the caller gives; Command writes it
// again when it is not the file written (a command may have removed it
// or left a FIFO in its place).
//
// # What is not carried
//
// The profile's `set -o` options: errexit, nounset, pipefail and errtrace
// turn a command's ordinary failure into an abort, xtrace and verbose print
// into its output, and the rest (noclobber, monitor, history, vi) serve
// an interactive shell. Of the shopt options only the glob and match
// ones are carried (dotglob, extglob, globstar, globasciiranges,
// nocaseglob, nocasematch, nullglob): failglob turns a glob with no
// match into an error. Variables the profile sets without exporting them,
// and traps, are not carried either: neither reaches a program the
// command runs. The user's BASH_ENV is read once, by the login shell,
// not before each command.
//
// # When to take it again
//
// Snapshot.Stale reports a change (time, size, existence) of the files a
// login bash reads (/etc/profile, /etc/profile.d/*, /etc/bash.bashrc,
// /etc/bashrc, ~/.bash_profile, ~/.bash_login, ~/.profile, ~/.bashrc,
// $BASH_ENV), of the probe shell's (zsh: ~/.zshenv, ~/.zprofile,
// ~/.zshrc, ~/.zlogin under $ZDOTDIR, /etc/zsh*; fish: config.fish and
// conf.d), or of the shells themselves. Cache holds the current snapshot
// and takes it again when stale: one take at a time, callers with the
// old snapshot go on with it meanwhile, callers without one wait. A take
// that fails or times out makes Get return a *FallbackError with the
// reason: the caller runs the command with `bash -lc` (ModeLogin) and
// logs the reason once (NewCache's onFallback). The failed take is not
// tried again until a profile file changes.
//
// # Did the command start?
//
// A command that times out behind a login profile that hangs printed
// nothing, like one that hangs itself. Started tells them apart: the
// restore script, or StartedScript appended to the login mode's BASH_ENV
// script (which bash reads after the profile), creates a file named by
// $HOSTCORE_STARTED just before the command runs, and unsets the
// variable. Started.Done after a timeout says whether the command began.
//
// Windows has no login bash to snapshot: there Take and Cache report
// ErrNotSupported.
package shellenv
