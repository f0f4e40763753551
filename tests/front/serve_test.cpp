// The trigger socket's request: the web tier that sends it is less trusted than rbd-sync,
// so only a cluster name and a printable requester get through, and they decide the run.
#include "front/serve.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace rbdsync::front {
namespace {

std::string refusal(const std::string& line) {
  try {
    parse_trigger_request(line);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::usage) << line;
    EXPECT_NE(
        error.hint().find(R"({"cluster": "ceph", "requested_by": "alice", "trigger": "web"})"),
        std::string::npos);
    return error.what();
  }
  ADD_FAILURE() << "accepted: " << line;
  return "";
}

TEST(TriggerRequest, NamesTheClusterAndWhoAskedOrDefaultsToCephAndNobody) {
  const TriggerRequest request = parse_trigger_request(
      R"({"cluster": "backup", "requested_by": "Jos\u00e9", "trigger": "cron"})");
  EXPECT_EQ(request.cluster, "backup");
  EXPECT_EQ(request.requested_by, "Jos\xc3\xa9");
  EXPECT_EQ(request.trigger, "cron");
  const TriggerRequest empty = parse_trigger_request("{}");
  EXPECT_EQ(empty.cluster, "ceph");
  EXPECT_EQ(empty.requested_by, "");
  EXPECT_EQ(empty.trigger, "web");
}

TEST(TriggerRequest, AnythingElseIsRefusedSayingWhat) {
  EXPECT_EQ(refusal(""), "bad request on the trigger socket: not one JSON object");
  EXPECT_EQ(refusal(R"(["ceph"])"), "bad request on the trigger socket: not one JSON object");
  EXPECT_EQ(refusal(R"({"cluster": "ceph", "args": "--db x"})"),
            "bad request on the trigger socket: unknown field 'args' (it takes cluster, "
            "requested_by and trigger)");
  EXPECT_EQ(refusal(R"({"trigger": "root"})"),
            "bad request on the trigger socket: trigger must be web, cron or manual, not 'root'");
  EXPECT_EQ(refusal(R"({"cluster": 7})"),
            "bad request on the trigger socket: cluster must be a string");
  EXPECT_EQ(refusal(R"({"cluster": "../../etc/x"})"),
            "bad request on the trigger socket: cluster must be 1 to 64 letters, digits, '-' or "
            "'_', not '../../etc/x'");
  EXPECT_NE(refusal(R"({"cluster": "-rf"})").find("cluster must be"), std::string::npos);
  EXPECT_EQ(refusal(R"({"requested_by": "eve\n\u001b[2J"})"),
            "bad request on the trigger socket: requested_by must be 1 to 256 bytes of "
            "printable UTF-8, not 'eve\\x0a\\x1b[2J'");
  EXPECT_NE(refusal(R"({"requested_by": ")" + std::string(257, 'a') + R"("})").find("1 to 256"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"requested_by": ""})").find("1 to 256"), std::string::npos);
}

TEST(TriggerRequest, TheRequestDecidesClusterTriggerAndRequesterAfterTheSettings) {
  // The settings come first: a --cluster or --trigger in the shared RBDSYNC_ARGS loses
  // to the request (the last of an option wins).
  EXPECT_EQ(
      trigger_run_arguments({"backup", "alice", "web"}, {"--id", "rbdsync", "--trigger", "cron"}),
      (std::vector<std::string>{"run", "--id", "rbdsync", "--trigger", "cron", "--cluster",
                                "backup", "--trigger", "web", "--json", "--requested-by",
                                "alice"}));
  EXPECT_EQ(trigger_run_arguments({"ceph", "", "cron"}, {}),
            (std::vector<std::string>{"run", "--cluster", "ceph", "--trigger", "cron", "--json"}));
  EXPECT_EQ(trigger_run_arguments({"ceph", "", "web"}, {}),
            (std::vector<std::string>{"run", "--cluster", "ceph", "--trigger", "web", "--json"}));
}

}  // namespace
}  // namespace rbdsync::front
