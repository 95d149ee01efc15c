package denylist

import "testing"

// TestParsedConstructs: every place of the syntax tree a word can sit in
// is read, and a syntax error hides nothing before or after it.
func TestParsedConstructs(t *testing.T) {
	for _, cmd := range []string{
		// places words sit in
		"[[ -f ~/.ssh/id_rsa ]] && echo y",
		"export K=~/.aws/credentials; cat $K",
		"declare -a a=(/etc/shadow x)",
		"for f in /etc/{shadow,x}; do :; done",
		"case $x in /etc/shadow) ;; esac",
		"f() { cat ~/.netrc; }; f",
		"a[$(cat /etc/shadow)]=1",
		"let x=$(cat /etc/shadow)",
		"(( x = $(cat /etc/shadow) ))",
		"cat <<< ~/.ssh/id_rsa",
		"diff <(cat /etc/shadow) x",
		"{ cat /etc/{shadow,x}; }",
		"while read l; do :; done < /etc/shadow",
		"coproc cat /etc/shadow",
		"time cat /etc/shadow",
		"! cat /etc/shadow",
		"cat /etc/shadow |& tee x",
		"select x in ~/.ssh/id_rsa; do :; done",
		// a syntax error hides nothing before it, and the lines read alone
		"cat ~/.ssh$(:)/id_rsa; )",
		"cat ~/.ss$(:)h/id_rsa\nfi",
		"echo )\ncat ~/.ss$(:)h/id_rsa",
		"echo \"unclosed; cat ~/.ss$(:)h/id_rsa",
		"cat ~/.ss$(:)h/id_rsa <<EOF\nunclosed",
		"cat <<EOF\n$(cat /etc/{shadow,x})\nEOF",
		"cat <<EOF\n${x:-$(cat /etc/{shadow,x})}\nEOF",
		"echo $(( 1 + )); cat /etc/{shadow,x}",
		"cat /etc/{shadow,x} `",
	} {
		if deniedPath(cmd, "/w", "/home/me", nil) == "" {
			t.Errorf("deniedPath(%q) allowed it", cmd)
		}
	}
	for _, cmd := range []string{
		"echo $(date) $((1+2)) <(true)",
		"echo \"$(git rev-parse HEAD)\" ${#x} ${!x} ${x^^}",
		"case $x in (a|b) ;; *) ;; esac",
		"[[ $x =~ ^(a|b)+$ ]] && echo y",
	} {
		if d := CheckCommand(cmd, "/w", "/home/me", nil); d.Denied() {
			t.Errorf("CheckCommand(%q) = %+v, want allowed", cmd, d)
		}
	}
}

// TestConcurrentChecks: checks run at once (one per Bash call) share
// nothing they write.
func TestConcurrentChecks(t *testing.T) {
	done := make(chan bool)
	for range 4 {
		go func() {
			for range 20 {
				deniedPath(`cat ~/$'\x2essh'/id_rsa ${HOME%/*}/x; git apply $'a\tb'`, "/w", "/home/me", nil)
				Commands(`echo $'x' "y" z`)
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
}
