package redact

import (
	"strings"
	"testing"
)

// TestRedactQuotedSecretOptions: the secrets commands take as option
// values go from the audit and the log however they are spelled: quoted
// with ' or ", unquoted, glued to the option, after '=' or a blank.
func TestRedactQuotedSecretOptions(t *testing.T) {
	for _, c := range []struct{ in, secret, visible string }{
		{`sshpass -p 'hunter one' ssh host`, "hunter one", "ssh host"},
		{`sshpass -p "hunter2x" ssh host`, "hunter2x", "ssh host"},
		{`sshpass -p'hunter3x' ssh host`, "hunter3x", "ssh host"},
		{`sshpass -phunter4x ssh host`, "hunter4x", "ssh host"},
		{`sshpass -v -p 'hunter5x' ssh host`, "hunter5x", "ssh host"},
		{`docker login -u me -p "hunter6x" registry.example`, "hunter6x", "registry.example"},
		{`docker login -u me -p 'hunter7x' registry.example`, "hunter7x", "registry.example"},
		{`docker login -u me --password "hunter8x" registry.example`, "hunter8x", "registry.example"},
		{`docker login -u me --password='hunter9x' registry.example`, "hunter9x", "registry.example"},
		{`docker login -u me --password hunter10x registry.example`, "hunter10x", "registry.example"},
		{`curl -u 'admin:hunter11x' https://x.example`, "hunter11x", "https://x.example"},
		{`curl -u "admin:hunter12x" https://x.example`, "hunter12x", "https://x.example"},
		{`curl --user 'admin:hunter13x' https://x.example`, "hunter13x", "https://x.example"},
		{`curl --user=admin:hunter14x https://x.example`, "hunter14x", "https://x.example"},
		{`curl --user="admin:hunter 15x" https://x.example`, "hunter 15x", "https://x.example"},
		{`curl -uadmin:hunter16x https://x.example`, "hunter16x", "https://x.example"},
		{`curl -s -u admin:'hunter17x' https://x.example`, "hunter17x", "https://x.example"},
		{`redis-cli -a hunter18x ping`, "hunter18x", "ping"},
		{`redis-cli -h db -a 'hunter19x' ping`, "hunter19x", "ping"},
		{`redis-cli -a "hunter20x" --no-auth-warning ping`, "hunter20x", "ping"},
		{`npm config set //registry.npmjs.org/:_authToken npm_hunter21x`, "npm_hunter21x", "npm config set"},
		{`npm config set //registry.npmjs.org/:_authToken 'hunter22x'`, "hunter22x", "npm config set"},
		{`npm config set //registry.npmjs.org/:_authToken="hunter23x"`, "hunter23x", "npm config set"},
		{`npm config set //registry.example/:_auth aHVudGVyMjR4`, "aHVudGVyMjR4", "npm config set"},
		{`npm config set //registry.example/:_password "aHVudGVyMjV4"`, "aHVudGVyMjV4", "npm config set"},
		{`openssl enc -aes-256-cbc -k hunter26x -in a -out b`, "hunter26x", "-in a -out b"},
		{`openssl enc -aes-256-cbc -k 'hunter 27x' -in a`, "hunter 27x", "-in a"},
		{`openssl enc -aes-256-cbc -pass pass:hunter28x -in a`, "hunter28x", "-in a"},
		{`openssl enc -aes-256-cbc -pass 'pass:hunter 29x' -in a`, "hunter 29x", "-in a"},
		{`openssl pkcs12 -export -passout "pass:hunter30x" -out c.p12`, "hunter30x", "-out c.p12"},
		{`openssl rsa -in k.pem -passin pass:hunter31x -out k2.pem`, "hunter31x", "-out k2.pem"},
		{`htpasswd -b .htpasswd admin hunter32x`, "hunter32x", "htpasswd -b .htpasswd admin"},
		{`htpasswd -cb .htpasswd admin 'hunter 33x'`, "hunter 33x", "htpasswd -cb .htpasswd admin"},
		{`htpasswd -B -b .htpasswd admin "hunter34x" && echo ok`, "hunter34x", "&& echo ok"},
		{`htpasswd -nb admin hunter35x`, "hunter35x", "htpasswd -nb admin"},
		{`htpasswd -b .htpasswd admin hunter36x > /dev/null; echo ok`, "hunter36x", "; echo ok"},
		{`mysql -u root -p'hunter37x' db`, "hunter37x", "db"},
		{`mysql -u root -p"hunter38x" db`, "hunter38x", "db"},
		{`mysql -u root --password='hunter39x' db`, "hunter39x", "db"},
		{`mysql -u root --password "hunter40x" db`, "hunter40x", "db"},
		{`mysqldump -phunter41x db`, "hunter41x", "db"},
	} {
		got := Redact(c.in)
		if strings.Contains(got, c.secret) || !strings.Contains(got, "[REDACTED]") || !strings.Contains(got, c.visible) {
			t.Errorf("Redact(%q) = %q: want %q hidden and %q shown", c.in, got, c.secret, c.visible)
		}
		args := `{"command":` + quoteJSON(c.in) + `}`
		if got := PreviewJSON(string(Canonical([]byte(args))), PreviewMax); strings.Contains(got, c.secret) {
			t.Errorf("audit preview of %s kept the secret: %s", args, got)
		}
	}
	for _, plain := range []string{
		"git commit -a -m 'fix the cli'", "tar -k -xf a.tar", "ls -p 'dir name'", "htpasswd -D .htpasswd admin",
		"openssl enc -d -in a -out b", "npm config set registry https://registry.example/", "curl -u admin https://x.example",
	} {
		if got := Redact(plain); got != plain {
			t.Errorf("ordinary text changed: %q -> %q", plain, got)
		}
	}
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
