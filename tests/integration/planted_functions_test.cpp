// Another database role must not be able to run code as rbd-sync (issue #31, item 1).
// A role that may create objects in schema public (every role on PostgreSQL <= 14, the
// database owner on 15+) plants functions there that match the argument lists of
// rbd-sync's statements better than pg_catalog's do; each records its call. A migrate
// and a sync then run, and the console's views are read: no planted function may ever
// have been called. Also: a schema rbdsync made by another role is refused by migrate,
// and the database's own settings for clients (encoding, search_path) change nothing.
#include <memory>
#include <string>
#include <vector>

#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

/// A function a statement of rbd-sync calls, as another role would plant it in public:
/// the signature that would win over pg_catalog's for the arguments rbd-sync passes,
/// and what it returns so that the caller notices nothing.
struct LookAlike {
  const char* name;
  const char* arguments;
  const char* returns;
  const char* real_call;
};

// hashtextextended(text, integer): pg_catalog's takes a bigint seed and the statements
// pass the literal 0 (an integer); to_timestamp(text): a parameter of unknown type
// prefers text over pg_catalog's double precision; jsonb_build_array with exact types:
// pg_catalog's is VARIADIC "any" (the console views made by migrate). The others have
// pg_catalog's own signatures, which win only while pg_catalog is searched first: they
// are planted so that a statement losing that order is caught too.
constexpr LookAlike k_look_alikes[] = {
    {"hashtextextended", "text, integer", "bigint", "pg_catalog.hashtextextended($1, $2)"},
    {"hashtextextended", "text, bigint", "bigint", "pg_catalog.hashtextextended($1, $2)"},
    {"to_timestamp", "text", "timestamptz", "pg_catalog.to_timestamp($1::double precision)"},
    {"to_timestamp", "bigint", "timestamptz", "pg_catalog.to_timestamp($1)"},
    {"to_regclass", "text", "regclass", "pg_catalog.to_regclass($1)"},
    {"pg_try_advisory_lock", "bigint", "boolean", "pg_catalog.pg_try_advisory_lock($1)"},
    {"pg_advisory_xact_lock", "bigint", "void", "pg_catalog.pg_advisory_xact_lock($1)"},
    {"set_config", "text, text, boolean", "text", "pg_catalog.set_config($1, $2, $3)"},
    {"current_setting", "text", "text", "pg_catalog.current_setting($1)"},
    {"pg_get_userbyid", "oid", "name", "pg_catalog.pg_get_userbyid($1)"},
    {"now", "", "timestamptz", "pg_catalog.now()"},
    {"jsonb_build_array", "text, bigint", "jsonb", "pg_catalog.jsonb_build_array($1, $2)"},
    {"jsonb_build_array", "text, bigint, text, text", "jsonb",
     "pg_catalog.jsonb_build_array($1, $2, $3, $4)"},
    {"jsonb_build_array", "text, bigint, text, text, bigint", "jsonb",
     "pg_catalog.jsonb_build_array($1, $2, $3, $4, $5)"},
};

class PlantedFunctionsTest : public IntegrationTest {
 protected:
  void SetUp() override {
    planter = unique_name("planter");
    for (char& c : planter) {
      c = c == '-' ? '_' : c;
    }
    admin = std::make_unique<pqxx::connection>(db.admin_conninfo());
    pqxx::nontransaction work(*admin);
    work.exec("CREATE ROLE " + planter + " NOLOGIN");
    work.exec("GRANT CREATE ON SCHEMA public TO " + planter);
  }

  void TearDown() override {
    pqxx::nontransaction work(*admin);
    work.exec("RESET ROLE");
    work.exec("DROP OWNED BY " + planter);
    work.exec("DROP ROLE " + planter);
  }

  /// Plants every look-alike as the other role; each call adds a row to
  /// public.planted_calls, which every role may write.
  void plant() {
    pqxx::nontransaction work(*admin);
    work.exec("SET ROLE " + planter);
    work.exec(
        "CREATE TABLE public.planted_calls (called text NOT NULL, "
        "by_role text NOT NULL DEFAULT current_user)");
    work.exec("GRANT INSERT ON public.planted_calls TO PUBLIC");
    for (const LookAlike& f : k_look_alikes) {
      const std::string signature = std::string(f.name) + "(" + f.arguments + ")";
      work.exec("CREATE FUNCTION public." + signature + " RETURNS " + f.returns +
                " LANGUAGE plpgsql AS $body$ BEGIN INSERT INTO public.planted_calls (called) "
                "VALUES (" +
                literal(signature) + "); " +
                (std::string(f.returns) == "void" ? "PERFORM " : "RETURN ") + f.real_call +
                "; END $body$");
    }
    work.exec("RESET ROLE");
  }

  /// What the planted functions recorded, read as the superuser ("name(args) as role").
  std::vector<std::string> planted_calls() const {
    pqxx::nontransaction work(*admin);
    std::vector<std::string> calls;
    for (const auto& row :
         work.exec("SELECT called || ' as ' || by_role FROM public.planted_calls")) {
      calls.push_back(row[0].as<std::string>());
    }
    return calls;
  }

  std::string planter;
  std::unique_ptr<pqxx::connection> admin;
};

TEST_F(PlantedFunctionsTest, AMigrateASyncAndTheConsoleViewsNeverCallAnotherRolesFunctions) {
  plant();
  // The planted functions do run for a session with the default search_path: the test
  // would prove nothing if they could not.
  EXPECT_EQ(db.rows("SELECT hashtextextended('probe', 0) = "
                    "pg_catalog.hashtextextended('probe', 0)"),
            std::vector<std::string>{"t"});
  ASSERT_EQ(planted_calls().size(), 1U);
  pqxx::nontransaction(*admin).exec("TRUNCATE public.planted_calls");

  const std::string pool = migrate_and_create_pool("planted");
  ceph.create_images(pool, "img", 2, 4ULL << 20);
  ceph.snapshot(pool, "img-0", "s1", false);
  const RunResult first = sync({"--pool", pool});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ceph.resize_image(pool, "img-1", 8ULL << 20);
  const RunResult second = sync({"--pool", pool, "--trigger", "cron"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const RunResult again = migrate();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  for (const char* view :
       {"console_pools", "console_images", "console_snapshots", "console_trash"}) {
    db.rows(std::string("SELECT row_key FROM rbdsync.") + view);
  }
  EXPECT_EQ(db.rows("SELECT count(*) FROM rbdsync.runs WHERE status = 'succeeded'"),
            std::vector<std::string>{"2"});
  EXPECT_EQ(planted_calls(), std::vector<std::string>{});
}

TEST_F(PlantedFunctionsTest, MigrateRefusesASchemaRbdsyncMadeByAnotherRole) {
  {
    pqxx::nontransaction work(*admin);
    work.exec("GRANT CREATE ON DATABASE " + db.name() + " TO " + planter);
    work.exec("SET ROLE " + planter);
    work.exec("CREATE SCHEMA rbdsync");
    work.exec("GRANT ALL ON SCHEMA rbdsync TO PUBLIC");
    work.exec("RESET ROLE");
  }
  const RunResult refused = migrate();
  EXPECT_EQ(refused.exit_code, 78) << refused.err;
  EXPECT_NE(refused.err.find("schema rbdsync belongs to role '" + planter + "'"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("hint: migrate as the schema's owner"), std::string::npos)
      << refused.err;
  EXPECT_EQ(db.rows("SELECT count(*) FROM pg_tables WHERE schemaname = 'rbdsync'"),
            std::vector<std::string>{"0"});
}

TEST_F(PlantedFunctionsTest, TheDatabasesClientSettingsChangeNothingRbdSyncWrites) {
  // A database whose clients default to LATIN1 and to schema public first: rbd-sync's
  // UTF-8 names would be stored re-encoded (é as Ã©), and its names resolved in public.
  {
    pqxx::nontransaction work(*admin);
    work.exec("ALTER DATABASE " + db.name() + " SET client_encoding = 'LATIN1'");
    work.exec("ALTER DATABASE " + db.name() + " SET search_path = public, pg_catalog");
  }
  plant();
  const std::string pool = migrate_and_create_pool("encoding");
  ceph.create_image(pool, "caf\xc3\xa9", 4ULL << 20);
  const RunResult synced = sync({"--pool", pool});
  ASSERT_EQ(synced.exit_code, 0) << synced.err;
  // Read back in UTF-8 whatever the database's default.
  auto connection = db.connect();
  pqxx::nontransaction work(*connection);
  work.exec("SET client_encoding = 'UTF8'");
  const pqxx::result names =
      work.exec("SELECT name, encode(convert_to(name, 'UTF8'), 'hex') FROM rbdsync.images");
  ASSERT_EQ(names.size(), 1U);
  EXPECT_EQ(names[0][0].as<std::string>(), "caf\xc3\xa9");
  EXPECT_EQ(names[0][1].as<std::string>(), "636166c3a9");
  EXPECT_EQ(planted_calls(), std::vector<std::string>{});
}

}  // namespace
}  // namespace rbdsync::testing
