#include "runtime/train/dist/dist_env.h"

#include "runtime/plan/config/config_toml.h"
#include "runtime/train/dist/listen_socket.h"

#include <charconv>
#include <cstdlib>
#include <sstream>

namespace bs::runtime {

namespace {

Result<int> intVar(const std::function<const char*(const char*)>& getenv, const char* name)
{
    const char* text = getenv(name);
    if (!text || !*text) {
        return makeError(ErrorCode::InvalidArgument,
            std::string("environment variable ") + name + " is not set (a torchrun-style launcher sets it)", name);
    }
    const std::string s(text);
    int value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) {
        return makeError(ErrorCode::InvalidArgument, std::string(name) + " must be an integer, not '" + s + "'", name);
    }
    return value;
}

} // namespace

Result<DistEnv> readDistEnv(const std::function<const char*(const char*)>& getenvFn)
{
    const std::function<const char*(const char*)> getenv =
        getenvFn ? getenvFn : [](const char* name) -> const char* { return std::getenv(name); };
    DistEnv env;
    const char* addr = getenv("MASTER_ADDR");
    if (!addr || !*addr) {
        return makeError(ErrorCode::InvalidArgument,
            "environment variable MASTER_ADDR is not set (a torchrun-style launcher sets it)", "MASTER_ADDR");
    }
    env.masterAddr = addr;
    for (auto [name, field] : {std::pair{"MASTER_PORT", &env.masterPort}, std::pair{"RANK", &env.rank},
             std::pair{"WORLD_SIZE", &env.worldSize}}) {
        auto v = intVar(getenv, name);
        if (!v) {
            return v.error();
        }
        *field = *v;
    }
    const char* local = getenv("LOCAL_RANK");
    if (local && *local) {
        auto v = intVar(getenv, "LOCAL_RANK");
        if (!v) {
            return v.error();
        }
        env.localRank = *v;
    } else {
        env.localRank = env.rank;
    }
    if (env.worldSize < 1) {
        return makeError(ErrorCode::InvalidArgument, "WORLD_SIZE must be at least 1", "WORLD_SIZE");
    }
    if (env.rank < 0 || env.rank >= env.worldSize) {
        return makeError(ErrorCode::InvalidArgument,
            "RANK " + std::to_string(env.rank) + " is outside [0, WORLD_SIZE = " + std::to_string(env.worldSize) + ")",
            "RANK");
    }
    if (env.masterPort < 1 || env.masterPort > 65535) {
        return makeError(ErrorCode::InvalidArgument, "MASTER_PORT must be in [1, 65535]", "MASTER_PORT");
    }
    return env;
}

Status checkDistEnv(const DistEnv& env, const RunConfig& config)
{
    if (env.worldSize != config.pipeline.stages) {
        return makeError(ErrorCode::InvalidArgument,
            "WORLD_SIZE is " + std::to_string(env.worldSize) + " but the pipeline has "
                + std::to_string(config.pipeline.stages) + " stages: one rank per stage",
            "WORLD_SIZE");
    }
    return ok();
}

Result<std::string> distBackend(const std::string& requested, const RunConfig& config)
{
    const bool cuda = parseDeviceName(config.device.name).cuda;
    if (requested.empty()) {
        return std::string(cuda ? "nccl" : "gloo");
    }
    if (requested != "nccl" && requested != "gloo") {
        return makeError(ErrorCode::InvalidArgument,
            "--backend '" + requested + "' is not allowed; allowed: nccl, gloo", "--backend");
    }
    if (requested == "nccl" && !cuda) {
        return makeError(ErrorCode::InvalidArgument,
            "--backend nccl needs CUDA stages (device.name = \"" + config.device.name
                + "\"); use --backend gloo on the CPU, or --device cuda",
            "--backend");
    }
    return requested;
}

std::string runIdentity(const DistEnv& env, const RunConfig& config, const std::string& backend)
{
    RunConfig shared = config;
    shared.device.name = parseDeviceName(config.device.name).cuda ? "cuda" : config.device.name;
    std::string out = "WORLD_SIZE = " + std::to_string(env.worldSize) + "\nbackend = " + backend + "\n";
    std::istringstream toml(toToml(shared));
    std::string section;
    for (std::string line; std::getline(toml, line);) {
        if (const std::size_t comment = line.find("  #"); comment != std::string::npos) {
            line.erase(comment); // toToml's explanations, never part of a value
        }
        if (line.empty() || line[0] == '#') {
            continue;
        }
        if (line[0] == '[') {
            section = line.substr(1, line.find(']') - 1);
            continue;
        }
        out += section + "." + line + "\n";
    }
    return out;
}

std::optional<std::string> identityDifference(
    const std::string& mine, const std::string& theirs, const std::string& other)
{
    std::istringstream a(mine), b(theirs);
    std::string x, y;
    for (;;) {
        const bool moreA = static_cast<bool>(std::getline(a, x));
        const bool moreB = static_cast<bool>(std::getline(b, y));
        if (!moreA && !moreB) {
            return std::nullopt;
        }
        if (!moreA || !moreB || x != y) {
            const std::string& line = moreA ? x : y;
            const std::string key = line.substr(0, line.find(" = "));
            auto value = [&](bool more, const std::string& l) {
                return more && l.rfind(key + " = ", 0) == 0 ? l.substr(key.size() + 3) : std::string("(missing)");
            };
            return key + " = " + value(moreA, x) + " here, " + value(moreB, y) + " on " + other;
        }
    }
}

GlooEndpoint glooEndpoint(const DistEnv& env, const std::function<const char*(const char*)>& getenvFn)
{
    const std::function<const char*(const char*)> getenv =
        getenvFn ? getenvFn : [](const char* name) -> const char* { return std::getenv(name); };
    if (const char* ifname = getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
        std::string first(ifname);
        first = first.substr(0, first.find(','));
        if (!first.empty()) {
            return {GlooEndpoint::Kind::Interface, first};
        }
    }
    if (const char* host = getenv("BUBBLESCOPE_GLOO_HOSTNAME"); host && *host) {
        return {GlooEndpoint::Kind::Hostname, host};
    }
    if (isLoopback(env.masterAddr)) {
        return {GlooEndpoint::Kind::Hostname, env.masterAddr == "::1" ? "::1" : "127.0.0.1"};
    }
    return {GlooEndpoint::Kind::ThisHost, ""};
}

std::string rankDevice(const DistEnv& env, const RunConfig& config)
{
    return parseDeviceName(config.device.name).cuda ? "cuda:" + std::to_string(env.localRank) : config.device.name;
}

} // namespace bs::runtime
