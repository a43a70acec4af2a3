import { describe, expect, it } from "vitest";
import { REDACTED, redactText } from "../../src/runs/index.ts";

/** Each line keeps everything but its password, which becomes [REDACTED]. */
function expectRedacted(cases: readonly [text: string, expected: string][]): void {
  for (const [text, expected] of cases) {
    expect(redactText(text).text, text).toBe(expected);
    // Inside a tool call's JSON arguments too, the JSON staying valid.
    const wrapped = redactText(JSON.stringify({ command: text })).text;
    expect((JSON.parse(wrapped) as { command: string }).command, text).toBe(expected);
  }
}

function expectKept(texts: readonly string[]): void {
  for (const text of texts) expect(redactText(text), text).toEqual({ text, changed: false });
}

describe("Oracle's user/password@host connect strings", () => {
  it("lose the password in JDBC URLs, driver calls and Oracle's command-line tools", () => {
    expectRedacted([
      ["jdbc:oracle:thin:scott/tiger@db:1521/ORCL", `jdbc:oracle:thin:scott/${REDACTED}@db:1521/ORCL`],
      ["url=jdbc:oracle:thin:app_user/Tig3r-pw#9@//db.internal:1521/svc", `url=jdbc:oracle:thin:app_user/${REDACTED}@//db.internal:1521/svc`],
      ["jdbc:oracle:oci:scott/tiger@ORCL", `jdbc:oracle:oci:scott/${REDACTED}@ORCL`],
      ['conn = cx_Oracle.connect("scott/tiger@localhost/orclpdb1")', `conn = cx_Oracle.connect("scott/${REDACTED}@localhost/orclpdb1")`],
      ["sqlplus -s scott/tiger@//db:1521/ORCL @scripts/setup.sql", `sqlplus -s scott/${REDACTED}@//db:1521/ORCL @scripts/setup.sql`],
      ["sqlplus system/Manager1 as sysdba", `sqlplus system/${REDACTED} as sysdba`],
      ["expdp system/Passw0rd@db directory=DUMP dumpfile=app.dmp", `expdp system/${REDACTED}@db directory=DUMP dumpfile=app.dmp`],
      ["sqlldr userid=scott/tiger control=load/data.ctl", `sqlldr userid=scott/${REDACTED} control=load/data.ctl`],
      ["rman target / catalog rco/Cat4log@catdb", `rman target / catalog rco/${REDACTED}@catdb`],
      ["SQL> connect scott/tiger@orcl", `SQL> connect scott/${REDACTED}@orcl`],
      ["CONN hr/hr_pass9", `CONN hr/${REDACTED}`],
    ]);
  });

  it("keep connect strings without a password, OS authentication, variables and paths", () => {
    expectKept([
      "jdbc:oracle:thin:@db:1521/ORCL",
      "jdbc:oracle:thin:@//db.internal:1521/svc",
      "sqlplus / as sysdba",
      "sqlplus -s /nolog @scripts/setup.sql",
      "sqlplus scott/${ORACLE_PASSWORD}@db",
      "sqlplus scott/$ORA_PW@db",
      "sqlldr control=load/data.ctl log=logs/load.log",
      "connect client/server apps over the bus",
      'oracledb.connect(user="scott", dsn="db/orclpdb1")',
    ]);
  });
});

describe("database and directory tools' short password flags", () => {
  it("lose the password after the flag that means one for that tool", () => {
    expectRedacted([
      ["ldapsearch -x -H ldap://dc1 -D cn=admin,dc=acme,dc=io -w S3cr3t-bind -b dc=acme,dc=io", `ldapsearch -x -H ldap://dc1 -D cn=admin,dc=acme,dc=io -w ${REDACTED} -b dc=acme,dc=io`],
      ["ldapmodify -D cn=admin -w 'S3cr3t bind' -f change.ldif", `ldapmodify -D cn=admin -w '${REDACTED}' -f change.ldif`],
      ["sqlcmd -S sql.internal -U sa -P Pa55w0rd! -Q \"select 1\"", `sqlcmd -S sql.internal -U sa -P ${REDACTED} -Q "select 1"`],
      ["bcp app.dbo.users out users.dat -S sql -U sa -P Pa55w0rd -c", `bcp app.dbo.users out users.dat -S sql -U sa -P ${REDACTED} -c`],
      ["mongosh --host db -u admin -p Mongo-Pa55 --authenticationDatabase admin", `mongosh --host db -u admin -p ${REDACTED} --authenticationDatabase admin`],
    ]);
  });

  it("keep the same letters where the tool gives them another meaning", () => {
    expectKept(["ldapsearch -x -W -D cn=admin", "grep -w secret file.txt", "sqlcmd -S sql -E -P", "mongosh -p", "ssh -p 2222 host", "wc -w notes.txt"]);
  });
});

describe("~/.pgpass lines (host:port:database:user:password)", () => {
  it("lose the password, the line's other fields kept", () => {
    expectRedacted([
      ["db.internal:5432:app:app_user:S3cretPw9", `db.internal:5432:app:app_user:${REDACTED}`],
      ["$ cat ~/.pgpass\nlocalhost:*:*:postgres:hunter2-local\n*:5432:reports:ro:R3ad-0nly!\n", `$ cat ~/.pgpass\nlocalhost:*:*:postgres:${REDACTED}\n*:5432:reports:ro:${REDACTED}\n`],
    ]);
  });

  it("keep passwd and shadow lines, times and ports that only look alike", () => {
    expectKept([
      "alice:x:1000:1000:Alice:/home/alice:/bin/bash",
      "12:30:45:123:done",
      "listening on db.internal:5432",
      "localhost:5432:app:app_user:${PGPASSWORD}",
      "see host:port:database:username:password in the docs",
    ]);
  });
});

describe("a secret name and its value passed to a call", () => {
  it("lose the value: PHP's define, environment defaults, Java properties, header maps", () => {
    expectRedacted([
      ["define( 'DB_PASSWORD', 'hunter2-secret' );", `define( 'DB_PASSWORD', '${REDACTED}' );`],
      ["define('AUTH_KEY', 'q9Zt4Lw8Nc2Vb6Xm7Rk1');", `define('AUTH_KEY', '${REDACTED}');`],
      ['os.environ.setdefault("API_TOKEN", "q9Zt4Lw8Nc2Vb6Xm7Rk1")', `os.environ.setdefault("API_TOKEN", "${REDACTED}")`],
      ['key = os.getenv("STRIPE_SECRET", "Zt4Lw8Nc2Vb6Xm7R")', `key = os.getenv("STRIPE_SECRET", "${REDACTED}")`],
      ['System.setProperty("db.password", "hunter2-secret");', `System.setProperty("db.password", "${REDACTED}");`],
      ['headers.put("X-Api-Key", "9f8e7d6c5b4a39281706");', `headers.put("X-Api-Key", "${REDACTED}");`],
    ]);
  });

  it("keep defaults that are placeholders, variables, and other names", () => {
    expectKept([
      "define('DB_PASSWORD', getenv('DB_PASSWORD'));",
      'os.getenv("API_TOKEN", "")',
      'os.environ.setdefault("API_TOKEN", "changeme")',
      'define("DB_HOST", "db.internal:3306");',
      'headers.set("Content-Type", "application/json")',
      'i18n.t("password", "Password")',
    ]);
  });
});
