package sql

import "testing"

func TestParseConnection(t *testing.T) {
	tests := []struct {
		conn    string
		dialect *dialect
		dsn     string
	}{
		{"sqlite:///var/lib/ferro/ferro.db", sqliteDialect, "/var/lib/ferro/ferro.db"},
		{"sqlite:////var/lib/ferro/ferro.db", sqliteDialect, "/var/lib/ferro/ferro.db"},
		{"SQLite:///tmp/../tmp/f.db", sqliteDialect, "/tmp/f.db"},
		{"postgresql://ferro:pw@db:5432/ferro?sslmode=disable", postgresDialect, "postgres://ferro:pw@db:5432/ferro?sslmode=disable"},
		{"postgres://db/ferro", postgresDialect, "postgres://db/ferro"},
		{"postgresql+psycopg2://ironic:pw@db/ironic", postgresDialect, "postgres://ironic:pw@db/ironic"},
		{"sqlite://ferro.db", nil, ""},
		{"sqlite:///tmp/f.db?mode=ro", nil, ""},
		{"mysql+pymysql://ironic:pw@db/ironic", nil, ""},
		{"/var/lib/ferro/ferro.db", nil, ""},
	}
	for _, tc := range tests {
		d, dsn, err := parseConnection(tc.conn)
		if tc.dialect == nil {
			if err == nil {
				t.Errorf("parseConnection(%q) = %s %q, want an error", tc.conn, d.name, dsn)
			}
			continue
		}
		if err != nil || d != tc.dialect || dsn != tc.dsn {
			t.Errorf("parseConnection(%q) = %v %q, %v; want %s %q", tc.conn, d, dsn, err, tc.dialect.name, tc.dsn)
		}
	}
}
