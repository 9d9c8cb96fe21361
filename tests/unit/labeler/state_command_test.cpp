#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "common/state/state_store.h"
#include "labeler/commands/state_command.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

std::set<std::string> names_under(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    names.insert(f.path().filename().string());
  return names;
}

class StateCommandTest : public ::testing::Test {
 protected:
  std::string path() const { return dir_.file("run/state.json"); }
  cn::testing::TempDir dir_;
};

TEST_F(StateCommandTest, MissingFileIsAnErrorNamingThePathAndCreatesNothing) {
  auto out = render_state(path(), false);
  ASSERT_FALSE(out) << *out;
  EXPECT_EQ(out.error().message, "no such file: " + path());
  EXPECT_FALSE(std::filesystem::exists(dir_.file("run"))) << "no directory created";
  EXPECT_FALSE(render_state(path(), true)) << "--json too";
}

TEST_F(StateCommandTest, CorruptFileIsReportedNotRepaired) {
  std::filesystem::create_directories(dir_.file("run"));
  cn::testing::write_file(path(), "{\"schema\":1,\"allocations\":{");
  auto out = render_state(path(), false);
  ASSERT_FALSE(out) << *out;
  EXPECT_NE(out.error().message.find(path()), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find("not valid JSON"), std::string::npos) << out.error().message;
  EXPECT_EQ(cn::testing::read_file(path()), "{\"schema\":1,\"allocations\":{");
  EXPECT_EQ(names_under(dir_.file("run")), (std::set<std::string>{"state.json"}))
      << "nothing moved aside, no lock file";
}

TEST_F(StateCommandTest, UnlabeledRowsShowTheLastReasonAndJsonCarriesTheDetail) {
  const std::string labeled = cn::testing::numbered_alloc_id(1);
  const std::string waiting = cn::testing::numbered_alloc_id(2);
  state::StateStore store({path()}, system_clock(), nullptr);
  ASSERT_TRUE(store.update([&](state::StateDoc& d) {
    d.allocations[labeled].labeled =
        state::LabeledInfo{1734, 48213, {"nomad:nomad.job=web"}, "2026-11-29T20:00:00Z"};
    d.allocations[waiting].last_attempt =
        state::LastAttempt{"labels_filtered", "the agent's --labels filter drops nomad: labels",
                           "2026-11-29T20:00:01Z"};
    return true;
  }));
  std::filesystem::remove(path() + ".lock");

  auto table = render_state(path(), false);
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_NE(table->find("REASON"), std::string::npos) << *table;
  std::string waiting_row = table->substr(table->find(waiting));
  waiting_row = waiting_row.substr(0, waiting_row.find('\n'));
  EXPECT_NE(waiting_row.find("labels_filtered"), std::string::npos) << *table;
  std::string labeled_row = table->substr(table->find(labeled));
  labeled_row = labeled_row.substr(0, labeled_row.find('\n'));
  EXPECT_NE(labeled_row.find("48213"), std::string::npos) << *table;
  EXPECT_EQ(labeled_row.find("labels_filtered"), std::string::npos) << *table;
  EXPECT_NE(table->find("2 allocation(s) in " + path()), std::string::npos) << *table;

  auto json = render_state(path(), true);
  ASSERT_TRUE(json) << json.error().message;
  auto j = nlohmann::json::parse(*json);
  EXPECT_EQ(j[waiting]["last_attempt"]["reason"], "labels_filtered");
  EXPECT_EQ(j[waiting]["last_attempt"]["detail"],
            "the agent's --labels filter drops nomad: labels");
  EXPECT_FALSE(j[labeled].contains("last_attempt"));
  EXPECT_EQ(names_under(dir_.file("run")), (std::set<std::string>{"state.json"}))
      << "reading took no lock";
}

}  // namespace
}  // namespace cn::labeler
