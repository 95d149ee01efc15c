// Package search is the engine behind the Glob and Grep tools: a parallel,
// ignore-aware directory walk and a bounded-memory line searcher with
// ripgrep's defaults, so a model that knows rg gets what it expects.
//
// The defaults are rg's: .gitignore files are honoured, .git and hidden
// entries are skipped (Grep searches a hidden one its path or include names
// explicitly), Grep skips binary files, Glob lists them as rg --files does
// (telling them apart would read every file). Glob sorts newest first.
//
// Speed is measured against rg on the Go source tree by the repository's
// benchmark table. Literal patterns, case-insensitive literals and regular
// expressions with a required literal are found by a literal scan first and
// confirmed by the regexp on the candidate line only; a regexp with no
// literal at all runs at the speed of Go's regexp engine.
//
// Containment is the caller's job: the root is already resolved and
// permission-checked. This package only promises never to leave it. The
// root is opened and checked to be the directory (or file) resolution saw,
// by device and inode; symlinks are neither followed nor reported; files
// are opened with O_NOFOLLOW. Names holding control characters or bytes
// that are not UTF-8 are written quoted, so a newline in a file name
// cannot pass for another result line.
package search
