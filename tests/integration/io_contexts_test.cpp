// ceph/connection.hpp's IoContexts on the real cluster: one IoCtx per pool and
// namespace, each fixed in its own namespace, so that no reader switches the namespace
// of a context another has reads in flight on.

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <string>

#include <gtest/gtest.h>
#include <rados/librados.hpp>

#include "ceph/connection.hpp"
#include "common/error.hpp"
#include "integration/harness.hpp"

namespace rbdsync::testing {
namespace {

class IoContextsTest : public IntegrationTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(rados.init(required_env("RBDSYNC_TEST_CEPH_ADMIN_ID").c_str()), 0);
    ASSERT_EQ(rados.conf_read_file(required_env("RBDSYNC_TEST_CEPH_CONF").c_str()), 0);
    ASSERT_EQ(rados.connect(), 0);
  }

  librados::Rados rados;  // declared first: shut down after every context is closed
};

TEST_F(IoContextsTest, EachPoolAndNamespaceHasOneContextKeptInItsOwnNamespace) {
  const std::string pool = unique_name("ioctx");
  ceph.create_pool(pool);
  ceph.create_namespace(pool, "tenant");
  const std::int64_t id = ceph.pool_id(pool);
  ceph::IoContexts contexts(rados);

  librados::IoCtx* plain = contexts.find(id, "");
  librados::IoCtx* tenant = contexts.find(id, "tenant");
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(tenant, nullptr);
  EXPECT_NE(plain, tenant);
  EXPECT_EQ(contexts.find(id, "tenant"), tenant);
  EXPECT_EQ(contexts.find(id, ""), plain);
  EXPECT_EQ(plain->get_namespace(), "");
  EXPECT_EQ(tenant->get_namespace(), "tenant");
  EXPECT_EQ(contexts.open_error(id), 0);

  // What one context writes is in its namespace only.
  librados::bufferlist data;
  data.append("in the tenant");
  ASSERT_EQ(tenant->write_full("io-contexts-probe", data), 0);
  std::uint64_t size = 0;
  std::time_t mtime = 0;
  EXPECT_EQ(tenant->stat("io-contexts-probe", &size, &mtime), 0);
  EXPECT_EQ(plain->stat("io-contexts-probe", &size, &mtime), -ENOENT);
}

TEST_F(IoContextsTest, APoolThatCannotBeOpenedIsNoneWithItsErrorAndAtThrows) {
  const std::int64_t missing = std::int64_t{1} << 40;
  ceph::IoContexts contexts(rados);
  EXPECT_EQ(contexts.find(missing, ""), nullptr);
  EXPECT_EQ(contexts.find(missing, "tenant"), nullptr);
  EXPECT_EQ(contexts.open_error(missing), -ENOENT);

  inventory::Pool gone;
  gone.id = missing;
  gone.name = "gone";
  try {
    contexts.at(gone, "");
    ADD_FAILURE() << "at() returned a context of a pool that does not exist";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot open pool 'gone'"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace rbdsync::testing
