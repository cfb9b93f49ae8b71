// Issue 14: an error from LibTorch reaches the terminal and summary.json as one human line, not
// with the C++ stack trace c10::Error::what() carries ("Exception raised from … frame #0 …").
#include "runtime/train/exec/run_session.h"
#include "runtime/train/exec/stage_transport.h"
#include "runtime/train/model/torch_error.h"
#include "tests/support/tiny_run_config.h"

#include <torch/torch.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace bs::runtime {
namespace {

/// The text of a real c10::Error (a view of 2 elements as 3).
std::string realTorchError(bool withoutBacktrace)
{
    try {
        (void)torch::ones({2}).view({3});
    } catch (const std::exception& e) {
        return withoutBacktrace ? torchErrorText(e) : std::string(e.what());
    }
    return "no error";
}

TEST(TorchErrors, TheirTextHasNoStackTrace)
{
    const std::string text = realTorchError(true);
    EXPECT_NE(text.find("shape '[3]' is invalid for input of size 2"), std::string::npos) << text;
    EXPECT_EQ(text.find("Exception raised from"), std::string::npos) << text;
    EXPECT_EQ(text.find("frame #"), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    const std::runtime_error plain("plain words");
    EXPECT_EQ(torchErrorText(plain), "plain words");
}

/// The last stage of a two-rank run whose neighbour's tensor never comes: recv fails with a
/// LibTorch error's full what() (with its stack trace, as Gloo's c10::Error carries it).
class FailingTransport final : public StageTransport
{
public:
    int rank() const override { return 1; }
    int worldSize() const override { return 2; }
    Status send(HandOffKind, int, std::int64_t, HandOff) override { return ok(); }
    Result<HandOff> recv(HandOffKind, int, std::int64_t, const std::vector<std::int64_t>&) override
    {
        return makeError(ErrorCode::Unavailable,
            "recv failed: " + realTorchError(false) + "\nException raised from recv at x.cpp:1\nframe #0: f()",
            "rank 1");
    }
    Status flush() override { return ok(); }
};

TEST(TorchErrors, SummaryErrorIsOneLine)
{
    const auto dir = std::filesystem::temp_directory_path() / ("bs_error_line_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    RunConfig config = bs::test::tinyRunConfig("1f1b", 2, 2, 2);
    SessionOptions options;
    options.transport = std::make_shared<FailingTransport>();
    options.outDir = dir;
    auto session = RunSession::create(config, options);
    ASSERT_TRUE(session) << session.error().describe();
    const Status ran = session->run();
    ASSERT_FALSE(ran);
    const std::string error = session->summary().error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_NE(error.find("recv failed: "), std::string::npos) << error;
    EXPECT_EQ(error.find("frame #"), std::string::npos) << error;
    std::ifstream in(dir / "summary.json");
    ASSERT_TRUE(in) << "no summary.json after the failure";
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json summary = nlohmann::json::parse(text.str());
    EXPECT_EQ(summary.at("error").get<std::string>(), error);
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace bs::runtime
