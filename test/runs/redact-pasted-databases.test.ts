import { describe, expect, it } from "vitest";
import { expectGone, expectKept } from "./pasted.ts";

/**
 * Passwords in the forms databases and clients take them: SQL statements, credential constructors,
 * Redis, MongoDB, and a password told in a sentence. Each must go whole, as written and inside a
 * JSON string, and what names or describes a password must stay.
 */

describe("a password in SQL", () => {
  it("goes in CREATE/ALTER USER and ROLE, CREATE LOGIN, IDENTIFIED BY and SET PASSWORD", () => {
    const cases: [string, string][] = [
      ["ALTER USER app WITH PASSWORD 'Tr0ub4dor-3xy';", "ALTER USER app WITH PASSWORD '"],
      ["CREATE ROLE app LOGIN ENCRYPTED PASSWORD 'Tr0ub4dor-3xy' VALID UNTIL 'infinity';", "VALID UNTIL 'infinity'"],
      ["create user app with password 'Tr0ub4dor-3xy';", "create user app with password '"],
      ["CREATE USER 'app'@'%' IDENTIFIED BY 'Tr0ub4dor-3xy';", "CREATE USER 'app'@'%' IDENTIFIED BY '"],
      ["ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY 'Tr0ub4dor-3xy';", "mysql_native_password BY '"],
      ["CREATE USER scott IDENTIFIED BY Tr0ub4dor3xy DEFAULT TABLESPACE users;", "DEFAULT TABLESPACE users"],
      ["SET PASSWORD FOR 'app'@'%' = PASSWORD('Tr0ub4dor-3xy');", "SET PASSWORD FOR 'app'@'%'"],
      ["SET PASSWORD FOR app = 'Tr0ub4dor-3xy';", "SET PASSWORD FOR app = '"],
      ["CREATE LOGIN app WITH PASSWORD = N'Tr0ub4dor-3xy', CHECK_POLICY = OFF;", "CHECK_POLICY = OFF"],
      [`psql -c "ALTER USER postgres PASSWORD 'Tr0ub4dor-3xy';"`, "ALTER USER postgres PASSWORD '"],
    ];
    for (const [text, keep] of cases) expectGone(text, "Tr0ub4dor-3xy".replace("-", text.includes("Tr0ub4dor3xy") ? "" : "-"), [keep]);
  });

  it("leaves a statement without one, and prose, alone", () => {
    expectKept("ALTER USER app WITH PASSWORD NULL;");
    expectKept("CREATE USER app IDENTIFIED BY '${DB_PASSWORD}';");
    expectKept("The column is named password and holds a hash.");
  });
});

describe("a password passed by position to a credential's constructor", () => {
  it("goes, and the user name stays", () => {
    const cases: [string, string][] = [
      [`requests.get(url, auth=("admin", "Tr0ub4dor-3xy"))`, `auth=("admin", "`],
      [`session.auth = HTTPBasicAuth('admin', 'Tr0ub4dor-3xy')`, "HTTPBasicAuth('admin', '"],
      [`aiohttp.BasicAuth(login="admin", password="Tr0ub4dor-3xy")`, `login="admin"`],
      [`var credential = new NetworkCredential("admin", "Tr0ub4dor-3xy", "CORP");`, `"CORP"`],
      [`new UsernamePasswordCredentials("admin", "Tr0ub4dor-3xy")`, `("admin", "`],
      [`$secure = ConvertTo-SecureString "Tr0ub4dor-3xy" -AsPlainText -Force`, "-AsPlainText -Force"],
      [`ConvertTo-SecureString -String 'Tr0ub4dor-3xy' -AsPlainText -Force`, "-String '"],
    ];
    for (const [text, keep] of cases) expectGone(text, "Tr0ub4dor-3xy", [keep]);
  });

  it("leaves variables alone", () => {
    expectKept(`requests.get(url, auth=(user, password))`);
    expectKept(`HTTPBasicAuth(os.environ["USER"], os.environ["PASS"])`);
    expectKept(`ConvertTo-SecureString $plain -AsPlainText -Force`);
  });
});

describe("a Redis password", () => {
  it("goes after --requirepass, in redis.conf, in CONFIG SET and in AUTH at the prompt", () => {
    const cases: [string, string][] = [
      ["command: redis-server --requirepass Tr0ub4dor-3xy --port 6380", "--port 6380"],
      ["# redis.conf\nrequirepass Tr0ub4dor-3xy\nmasterauth 'Tr0ub4dor-3xy'\nport 6379", "port 6379"],
      ["redis-cli -h cache CONFIG SET requirepass Tr0ub4dor-3xy", "CONFIG SET requirepass "],
      ["127.0.0.1:6379> AUTH Tr0ub4dor-3xy\nOK", "127.0.0.1:6379> AUTH "],
      ["cache:6379> AUTH default Tr0ub4dor-3xy\nOK", "AUTH default "],
    ];
    for (const [text, keep] of cases) expectGone(text, "Tr0ub4dor-3xy", [keep]);
  });

  it("leaves a variable and prose alone", () => {
    expectKept('command: redis-server --requirepass "${REDIS_PASSWORD}"');
    expectKept("command: redis-server --requirepass $REDIS_PASSWORD");
    expectKept("Set requirepass in redis.conf, then AUTH with it.");
  });
});

describe("a MongoDB user's pwd", () => {
  it("goes in createUser, updateUser and auth", () => {
    for (const text of [
      `db.createUser({ user: "app", pwd: "Tr0ub4dor-3xy", roles: [{ role: "readWrite", db: "app" }] })`,
      `db.getSiblingDB("admin").updateUser("app", { pwd: 'Tr0ub4dor-3xy' })`,
      `db.auth({ user: "app", pwd: "Tr0ub4dor-3xy" })`,
    ]) {
      expectGone(text, "Tr0ub4dor-3xy", ["pwd: "]);
    }
  });

  it("leaves a prompt for it and the shell's pwd alone", () => {
    expectKept(`db.createUser({ user: "app", pwd: passwordPrompt(), roles: [] })`);
    expectKept("cd /srv && pwd: /srv");
  });
});

describe("a password told in a sentence", () => {
  it("goes when the word looks made up: both letter cases and a digit", () => {
    const cases: [string, string, string][] = [
      ["The password is Zk4-orchid-Pq. Rotate it tomorrow.", "Zk4-orchid-Pq", "Rotate it tomorrow."],
      ["my password was Summer2024! and it still works", "Summer2024!", "and it still works"],
      ["Password for user admin: Zk4-orchid-Pq\n$ whoami", "Zk4-orchid-Pq", "$ whoami"],
      ["The passphrase is now Xq7Lp2Vn9Rt, keep it safe", "Xq7Lp2Vn9Rt", "keep it safe"],
    ];
    for (const [text, secret, kept] of cases) expectGone(text, secret, [kept]);
  });

  it("leaves what prose says about a password alone", () => {
    for (const text of ["The password is required", "password is too short: 12 chars", "the password is sha256-hashed", "password is stored in /etc/Secrets2024/x", "the password is rotated every 90 days"]) {
      expectKept(text);
    }
  });
});

describe("a wallet's private key given to a client", () => {
  const key = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
  it("goes: ethers' Wallet, viem's privateKeyToAccount, web3.py's from_key, Hardhat's accounts list", () => {
    for (const text of [
      `const wallet = new ethers.Wallet("0x${key}", provider)`,
      `const account = privateKeyToAccount('0x${key}')`,
      `acct = w3.eth.account.from_key("${key}")`,
      `networks: { sepolia: { url: RPC, accounts: ["0x${key}", "0x${key.split("").reverse().join("")}"] } }`,
    ]) {
      expectGone(text, key);
      expectGone(text, key.split("").reverse().join(""));
    }
  });

  it("leaves a transaction's hash, an address and a variable alone", () => {
    for (const text of [`tx 0x${key} confirmed`, "new ethers.Wallet(process.env.PRIVATE_KEY)", 'accounts: ["0x71C7656EC7ab88b098defB751B7401B5f6d8976F"]', `getTransaction("0x${key}")`]) {
      expectKept(text);
    }
  });
});
