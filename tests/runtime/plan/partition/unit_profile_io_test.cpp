// Unit profiles on disk (unit_profile_io.h): what `partition --measured --json` writes reads back
// unit for unit; every malformed field is refused naming it.
#include "runtime/plan/partition/unit_profile_io.h"

#include "runtime/plan/partition/partition_choice.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

namespace bs::runtime {
namespace {

std::vector<UnitCost> someUnits()
{
    return {UnitCost{0.25, 0.5, 4096, 1024, 1000}, UnitCost{1.5, 3.0, 8192, 2048, 2000},
        UnitCost{0.125, 0.25, 64, 16, 100}};
}

nlohmann::json profileJson()
{
    PartitionChoice choice;
    choice.units = someUnits();
    choice.costsMeasured = true;
    nlohmann::json j = choice;
    j["micro_batch_size"] = 4;
    return j;
}

TEST(UnitProfileIo, WhatThePartitionCommandWritesReadsBack)
{
    auto profile = unitProfileFromJson(profileJson());
    ASSERT_TRUE(profile) << profile.error().describe();
    EXPECT_EQ(profile->microBatchSize, 4);
    EXPECT_EQ(profile->units, someUnits());
    EXPECT_FALSE(profile->shape); // no "model": the caller checks the unit count only
    nlohmann::json withModel = profileJson();
    withModel["model"] = shapeJson(gptPreset("deep").value());
    auto described = unitProfileFromJson(withModel);
    ASSERT_TRUE(described);
    ASSERT_TRUE(described->shape);
    EXPECT_EQ(shapeText(*described->shape), "layers 40, d_model 64, heads 4, seq_len 64, vocab 256");
    withModel["model"]["vocab"] = 0;
    EXPECT_NE(unitProfileFromJson(withModel).error().context.find("model"), std::string::npos);
}

TEST(UnitProfileIo, ParamBytesDefaultToAQuarterOfTheStaticBytes)
{
    nlohmann::json j = profileJson();
    j["unit_costs"][1].erase("param_bytes");
    auto profile = unitProfileFromJson(j);
    ASSERT_TRUE(profile);
    EXPECT_EQ(profile->units[1].paramBytes, 8192 / 4);
}

TEST(UnitProfileIo, MalformedFieldsAreNamed)
{
    struct Case
    {
        const char* field;
        std::function<void(nlohmann::json&)> spoil;
    };
    const std::vector<Case> cases{
        {"micro_batch_size", [](nlohmann::json& j) { j.erase("micro_batch_size"); }},
        {"micro_batch_size", [](nlohmann::json& j) { j["micro_batch_size"] = 0; }},
        {"unit_costs", [](nlohmann::json& j) { j["unit_costs"] = nlohmann::json::array(); }},
        {"unit_costs[0].forward_ms", [](nlohmann::json& j) { j["unit_costs"][0]["forward_ms"] = -1.0; }},
        {"unit_costs[1].backward_ms", [](nlohmann::json& j) { j["unit_costs"][1]["backward_ms"] = "fast"; }},
        {"unit_costs[2].static_bytes", [](nlohmann::json& j) { j["unit_costs"][2]["static_bytes"] = 1.5; }},
        {"unit_costs[2].activation_bytes", [](nlohmann::json& j) { j["unit_costs"][2]["activation_bytes"] = -3; }},
        {"unit_costs[0].param_bytes",
            [](nlohmann::json& j) { j["unit_costs"][0]["param_bytes"] = 18446744073709551615ULL; }},
        {"unit_costs[1]", [](nlohmann::json& j) { j["unit_costs"][1] = 7; }},
    };
    for (const Case& c : cases) {
        nlohmann::json j = profileJson();
        c.spoil(j);
        auto profile = unitProfileFromJson(j);
        ASSERT_FALSE(profile) << c.field;
        EXPECT_EQ(profile.error().code, ErrorCode::ParseError);
        EXPECT_NE(profile.error().context.find(c.field), std::string::npos) << profile.error().context;
    }
    EXPECT_FALSE(unitProfileFromJson(nlohmann::json::array()));
    nlohmann::json estimates = profileJson(); // partition --json without --measured
    estimates["costs"] = "flops";
    auto refused = unitProfileFromJson(estimates);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("FLOP estimates"), std::string::npos);
}

TEST(UnitProfileIo, FilesThatAreNotProfilesAreRefused)
{
    const auto dir = std::filesystem::temp_directory_path() / "bs_unit_profile_io_test";
    std::filesystem::create_directories(dir);
    EXPECT_EQ(readUnitProfile(dir).error().code, ErrorCode::IoError); // a directory
    const auto bad = dir / "bad.json";
    std::ofstream(bad) << "{\"micro_batch_size\": 2, \"unit_costs\": [";
    EXPECT_EQ(readUnitProfile(bad).error().code, ErrorCode::ParseError);
    const auto huge = dir / "huge.json";
    std::ofstream(huge) << "{\"micro_batch_size\": 1e400}";
    EXPECT_FALSE(readUnitProfile(huge));
    const auto good = dir / "good.json";
    std::ofstream(good) << profileJson().dump();
    auto profile = readUnitProfile(good);
    ASSERT_TRUE(profile) << profile.error().describe();
    EXPECT_EQ(profile->units.size(), 3u);
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace bs::runtime
