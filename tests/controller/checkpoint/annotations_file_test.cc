#include "checkpoint/annotations_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace rota::checkpoint {
namespace {

namespace fs = std::filesystem;

TEST(ParseAnnotationsTest, ReadsTheKubeletsRendering) {
  // (As the kubelet writes it: sorted, Go-quoted, no newline after the last line.)
  const std::string text =
      "kubectl.kubernetes.io/last-applied-configuration=\"{\\\"apiVersion\\\":\\\"v1\\\"}\\n\"\n"
      "rota.dev/checkpoint=\"true\"\n"
      "rota.dev/checkpoint-requested-at=\"2026-11-01T10:00:00Z\"";
  Result<Annotations> a = ParseAnnotations(text);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, (Annotations{{"kubectl.kubernetes.io/last-applied-configuration", "{\"apiVersion\":\"v1\"}\n"},
                             {"rota.dev/checkpoint", "true"},
                             {"rota.dev/checkpoint-requested-at", "2026-11-01T10:00:00Z"}}));
}

TEST(ParseAnnotationsTest, AnEmptyFileHasNoAnnotations) {
  Result<Annotations> a = ParseAnnotations("");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->empty());
}

TEST(ParseAnnotationsTest, AValueMayHoldAnEqualsSignAndAnEmptyValueIsKept) {
  Result<Annotations> a = ParseAnnotations("a=\"x=y\"\nb=\"\"\n");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, (Annotations{{"a", "x=y"}, {"b", ""}}));
}

// What Go's %q writes (checked with go1.x's fmt) and what it stands for.
TEST(UnquoteGoTest, ReadsEveryEscapeGoWrites) {
  const struct {
    std::string quoted, value;
  } cases[] = {
      {R"("line1\nline2\ttab \"q\" back\\slash é ☃ 😀")", "line1\nline2\ttab \"q\" back\\slash é ☃ 😀"},
      {R"("\x01\x7f\a\b\f\r\v")", "\x01\x7f\a\b\f\r\v"},
      {R"("\u00a0\U000e0001")", "\u00a0\U000e0001"},
      {R"("\xff\xfe")", "\xff\xfe"},
      {R"("\101\060")", "A0"},  // octal, which Go reads though it does not write it
      {R"("")", ""},
  };
  for (const auto& c : cases) {
    Result<std::string> v = UnquoteGo(c.quoted);
    ASSERT_TRUE(v.ok()) << c.quoted << ": " << v.status().message();
    EXPECT_EQ(*v, c.value) << c.quoted;
  }
}

TEST(UnquoteGoTest, RejectsWhatGoRejects) {
  for (const std::string bad : {R"(unquoted)", R"("open)", R"("a"b")", R"("\q")", R"("\x4")", R"("\ud800")",
                                R"("\U00110000")", R"("\400")", R"("\'")", R"("trailing\")"}) {
    EXPECT_FALSE(UnquoteGo(bad).ok()) << bad;
  }
}

TEST(ParseAnnotationsTest, AnErrorNamesTheLine) {
  Result<Annotations> a = ParseAnnotations("a=\"1\"\nb=\"\\q\"");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind("line 2: ", 0), 0u) << a.status().message();
  EXPECT_FALSE(ParseAnnotations("no-equals-sign").ok());
  EXPECT_FALSE(ParseAnnotations("=\"no key\"").ok());
}

// A downward API volume as the kubelet lays it out: the file is a symbolic link through `..data`,
// which points at a timestamped directory and is swapped for a new one on each update.
class DownwardApiVolume {
 public:
  DownwardApiVolume() {
    std::string dir = (fs::temp_directory_path() / "rota-podinfo-XXXXXX").string();
    root_ = ::mkdtemp(dir.data());
    fs::create_symlink("..data/annotations", root_ / "annotations");
  }
  ~DownwardApiVolume() { fs::remove_all(root_); }
  void Write(const std::string& text) {
    const std::string version = "..2026_11_01_10_00_0" + std::to_string(++versions_);
    fs::create_directory(root_ / version);
    std::ofstream(root_ / version / "annotations") << text;
    fs::create_symlink(version, root_ / "..data_tmp");
    fs::rename(root_ / "..data_tmp", root_ / "..data");  // the atomic swap
  }
  std::string path() const { return (root_ / "annotations").string(); }

 private:
  fs::path root_;
  int versions_ = 0;
};

TEST(ReadAnnotationsFileTest, AMissingFileIsNotFound) {
  DownwardApiVolume volume;  // (the link dangles until the first update)
  Result<Annotations> a = ReadAnnotationsFile(volume.path());
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kNotFound);
  EXPECT_NE(a.status().message().find(volume.path()), std::string::npos) << a.status().message();
}

TEST(ReadAnnotationsFileTest, SeesTheFileTheKubeletSwappedIn) {
  DownwardApiVolume volume;
  volume.Write("rota.dev/checkpoint=\"true\"");
  Result<Annotations> first = ReadAnnotationsFile(volume.path());
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->size(), 1u);
  volume.Write("rota.dev/checkpoint=\"true\"\nrota.dev/checkpoint-requested-at=\"2026-11-01T10:00:00Z\"");
  Result<Annotations> second = ReadAnnotationsFile(volume.path());
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->at("rota.dev/checkpoint-requested-at"), "2026-11-01T10:00:00Z");
}

TEST(ReadAnnotationsFileTest, AnErrorNamesTheFile) {
  DownwardApiVolume volume;
  volume.Write("garbage");
  Result<Annotations> a = ReadAnnotationsFile(volume.path());
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind(volume.path() + ": line 1", 0), 0u) << a.status().message();
}

}  // namespace
}  // namespace rota::checkpoint
