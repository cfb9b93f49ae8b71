// The torchrun environment: every missing or malformed variable is a clear InvalidArgument that
// names it, and WORLD_SIZE must equal the number of stages; all before any work.
#include "runtime/train/dist/dist_env.h"

#include "runtime/train/exec/stage_transport.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace bs::runtime {
namespace {

std::function<const char*(const char*)> envOf(const std::map<std::string, std::string>& vars)
{
    auto copy = std::make_shared<std::map<std::string, std::string>>(vars);
    return [copy](const char* name) -> const char* {
        auto it = copy->find(name);
        return it == copy->end() ? nullptr : it->second.c_str();
    };
}

const std::map<std::string, std::string> kGood{
    {"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29511"}};

TEST(DistEnv, ReadsTheTorchrunVariables)
{
    auto env = readDistEnv(envOf(kGood));
    ASSERT_TRUE(env.has_value()) << env.error().describe();
    EXPECT_EQ(env->rank, 1);
    EXPECT_EQ(env->worldSize, 2);
    EXPECT_EQ(env->localRank, 1);
    EXPECT_EQ(env->masterAddr, "127.0.0.1");
    EXPECT_EQ(env->masterPort, 29511);
}

TEST(DistEnv, EachMissingOrBadVariableIsNamed)
{
    for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) {
        auto vars = kGood;
        vars.erase(name);
        auto env = readDistEnv(envOf(vars));
        ASSERT_FALSE(env.has_value()) << name;
        EXPECT_EQ(env.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(env.error().message.find(name), std::string::npos) << env.error().describe();
    }
    for (auto [name, value] : {std::pair{"RANK", "x"}, std::pair{"RANK", "2"}, std::pair{"MASTER_PORT", "70000"},
             std::pair{"WORLD_SIZE", "0"}}) {
        auto vars = kGood;
        vars[name] = value;
        auto env = readDistEnv(envOf(vars));
        ASSERT_FALSE(env.has_value()) << name << "=" << value;
        EXPECT_EQ(env.error().context, name) << env.error().describe();
    }
}

TEST(DistEnv, WorldSizeMustEqualStages)
{
    auto env = readDistEnv(envOf(kGood));
    ASSERT_TRUE(env.has_value());
    RunConfig config;
    config.pipeline.stages = 2;
    EXPECT_TRUE(checkDistEnv(*env, config).has_value());
    config.pipeline.stages = 4;
    const Status s = checkDistEnv(*env, config);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(s.error().message.find("WORLD_SIZE is 2"), std::string::npos) << s.error().describe();
}

TEST(DistEnv, BackendDefaultsToNcclOnCudaAndGlooOnTheCpu)
{
    RunConfig config;
    EXPECT_EQ(distBackend("", config).value(), "gloo");
    EXPECT_EQ(distBackend("gloo", config).value(), "gloo");
    const auto nccl = distBackend("nccl", config);
    ASSERT_FALSE(nccl);
    EXPECT_EQ(nccl.error().context, "--backend");
    EXPECT_NE(nccl.error().message.find("needs CUDA stages"), std::string::npos);
    config.device.name = "cuda";
    EXPECT_EQ(distBackend("", config).value(), "nccl");
    EXPECT_EQ(distBackend("gloo", config).value(), "gloo"); // CUDA stages, tensors through the host
    const auto mpi = distBackend("mpi", config);
    ASSERT_FALSE(mpi);
    EXPECT_EQ(mpi.error().message, "--backend 'mpi' is not allowed; allowed: nccl, gloo");
}

TEST(DistEnv, EachCudaRankTakesItsLocalGpu)
{
    DistEnv env;
    env.localRank = 3;
    RunConfig config;
    EXPECT_EQ(rankDevice(env, config), "cpu");
    config.device.name = "cuda";
    EXPECT_EQ(rankDevice(env, config), "cuda:3");
    config.device.name = "cuda:0";
    EXPECT_EQ(rankDevice(env, config), "cuda:3");
}

// Ranks compare identities at the rendezvous: equal for the ranks of one run (CUDA ranks differ
// only in their own GPU), and the first difference names the field and both values.
TEST(DistEnv, RunIdentityNamesTheFirstFieldThatDiffers)
{
    DistEnv env;
    env.worldSize = 2;
    RunConfig a;
    a.pipeline.stages = 2;
    RunConfig b = a;
    EXPECT_EQ(identityDifference(runIdentity(env, a, "gloo"), runIdentity(env, b, "gloo"), "rank 0"), std::nullopt);
    b.pipeline.microbatches = a.pipeline.microbatches + 2;
    EXPECT_EQ(identityDifference(runIdentity(env, b, "gloo"), runIdentity(env, a, "gloo"), "rank 0").value(),
        "pipeline.microbatches = " + std::to_string(b.pipeline.microbatches) + " here, "
            + std::to_string(a.pipeline.microbatches) + " on rank 0");
    DistEnv three = env;
    three.worldSize = 3;
    EXPECT_EQ(identityDifference(runIdentity(env, a, "gloo"), runIdentity(three, a, "gloo"), "rank 1").value(),
        "WORLD_SIZE = 2 here, 3 on rank 1");
    EXPECT_EQ(identityDifference(runIdentity(env, a, "gloo"), runIdentity(env, a, "nccl"), "rank 1").value(),
        "backend = gloo here, nccl on rank 1");
    RunConfig gpu0 = a, gpu1 = a;
    gpu0.device.name = "cuda:0";
    gpu1.device.name = "cuda:1";
    EXPECT_EQ(
        identityDifference(runIdentity(env, gpu0, "nccl"), runIdentity(env, gpu1, "nccl"), "rank 0"), std::nullopt);
    RunConfig text = a;
    text.data.spec = "text:/data/a # not a comment.txt";
    EXPECT_NE(identityDifference(runIdentity(env, text, "gloo"), runIdentity(env, a, "gloo"), "rank 0"), std::nullopt);
}

// Each rank's Gloo endpoint is its own: it used to bind MASTER_ADDR on every rank, which fails
// (or binds nothing useful) on every machine but the master's.
TEST(DistEnv, GlooListensOnTheRanksOwnEndpoint)
{
    std::map<std::string, std::string> vars;
    auto getenv = [&](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
    DistEnv env;
    env.masterAddr = "10.1.2.3"; // rank 0's machine, not this one
    env.rank = 5;
    GlooEndpoint e = glooEndpoint(env, getenv);
    EXPECT_EQ(e.kind, GlooEndpoint::Kind::ThisHost) << "this machine's hostname, never the master's address";
    vars["BUBBLESCOPE_GLOO_HOSTNAME"] = "node7.cluster";
    e = glooEndpoint(env, getenv);
    EXPECT_EQ(e.kind, GlooEndpoint::Kind::Hostname);
    EXPECT_EQ(e.value, "node7.cluster");
    vars["GLOO_SOCKET_IFNAME"] = "ib0,eth0"; // PyTorch's variable wins, first interface
    e = glooEndpoint(env, getenv);
    EXPECT_EQ(e.kind, GlooEndpoint::Kind::Interface);
    EXPECT_EQ(e.value, "ib0");
    vars.clear();
    for (const char* loop : {"127.0.0.1", "localhost", "127.0.1.1"}) {
        env.masterAddr = loop; // one machine: loopback only, nothing reachable from outside
        e = glooEndpoint(env, getenv);
        EXPECT_EQ(e.kind, GlooEndpoint::Kind::Hostname) << loop;
        EXPECT_EQ(e.value, "127.0.0.1") << loop;
    }
}

TEST(DistEnv, TagsSeparateMicrobatchAndDirection)
{
    EXPECT_NE(handOffTag(HandOffKind::Activation, 3), handOffTag(HandOffKind::Gradient, 3));
    EXPECT_NE(handOffTag(HandOffKind::Activation, 3), handOffTag(HandOffKind::Activation, 4));
    EXPECT_NE(handOffTag(HandOffKind::Gradient, 3), handOffTag(HandOffKind::Activation, 4));
}

} // namespace
} // namespace bs::runtime
