#include "runtime/plan/schedule/action.h"

#include <charconv>

namespace bs::runtime {

char actionLetter(ActionKind kind)
{
    switch (kind) {
    case ActionKind::Forward:
        return 'F';
    case ActionKind::Backward:
        return 'B';
    case ActionKind::BackwardInput:
        return 'I';
    case ActionKind::BackwardWeight:
        return 'W';
    case ActionKind::Update:
        return 'U';
    case ActionKind::OverlapForwardBackward:
        return 'O';
    }
    return '?';
}

std::string_view actionKindName(ActionKind kind)
{
    switch (kind) {
    case ActionKind::Forward:
        return "forward";
    case ActionKind::Backward:
        return "backward";
    case ActionKind::BackwardInput:
        return "backward-input";
    case ActionKind::BackwardWeight:
        return "backward-weight";
    case ActionKind::Update:
        return "update";
    case ActionKind::OverlapForwardBackward:
        return "overlapped forward-backward";
    }
    return "unknown";
}

std::string toString(const Action& action)
{
    if (action.isOverlap()) {
        return "(" + toString(action.forwardHalf()) + ";" + toString(action.backwardHalf()) + ")OVERLAP_F_B";
    }
    std::string out = std::to_string(action.stage);
    out += actionLetter(action.kind);
    out += std::to_string(action.microbatch);
    if (action.kind == ActionKind::Update) {
        out += ':' + std::to_string(action.firstMb) + '-' + std::to_string(action.lastMb);
    }
    return out;
}

namespace {

// Reads a non-negative decimal integer at the front of `text` and advances past it.
bool readNumber(std::string_view& text, int& out)
{
    const auto* begin = text.data();
    const auto* end = begin + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, out);
    if (ec != std::errc() || ptr == begin || out < 0) {
        return false;
    }
    text.remove_prefix(static_cast<std::size_t>(ptr - begin));
    return true;
}

Result<ActionKind> kindFromLetter(char letter)
{
    switch (letter) {
    case 'F':
        return ActionKind::Forward;
    case 'B':
        return ActionKind::Backward;
    case 'I':
        return ActionKind::BackwardInput;
    case 'W':
        return ActionKind::BackwardWeight;
    case 'U':
        return ActionKind::Update;
    default:
        return makeError(
            ErrorCode::ParseError, std::string("unknown action letter '") + letter + "'", "allowed: F, B, I, W, U");
    }
}

} // namespace

namespace {

constexpr std::string_view kOverlapSuffix = ")OVERLAP_F_B";

// "(0F3;1B2)OVERLAP_F_B": PyTorch's overlapped pair, a forward then a full backward.
Result<Action> parseOverlap(std::string_view text)
{
    const std::string original(text);
    auto fail = [&](const std::string& why) {
        return makeError(ErrorCode::ParseError, "bad action '" + original + "': " + why,
            "expected (<stage>F<microbatch>;<stage>B<microbatch>)OVERLAP_F_B");
    };
    text.remove_prefix(1);
    text.remove_suffix(kOverlapSuffix.size());
    const auto semicolon = text.find(';');
    if (semicolon == std::string_view::npos) {
        return fail("an overlapped pair needs two actions separated by ';'");
    }
    auto first = parseAction(text.substr(0, semicolon));
    auto second = parseAction(text.substr(semicolon + 1));
    if (!first || !second) {
        return fail(!first ? first.error().message : second.error().message);
    }
    if (first->kind != ActionKind::Forward || second->kind != ActionKind::Backward) {
        return fail("an overlapped pair is a forward (F) then a full backward (B)");
    }
    return overlapForwardBackward(first->stage, first->microbatch, second->stage, second->microbatch);
}

} // namespace

Result<Action> parseAction(std::string_view text)
{
    if (text.size() > kOverlapSuffix.size() + 1 && text.front() == '('
        && text.substr(text.size() - kOverlapSuffix.size()) == kOverlapSuffix) {
        return parseOverlap(text);
    }
    const std::string original(text);
    auto fail = [&](const std::string& why) {
        return makeError(ErrorCode::ParseError, "bad action '" + original + "': " + why,
            "expected <stage><F|B|I|W><microbatch> or <stage>U<index>:<first>-<last>");
    };
    Action action;
    if (!readNumber(text, action.stage)) {
        return fail("missing stage number");
    }
    if (text.empty()) {
        return fail("missing action letter");
    }
    auto kind = kindFromLetter(text.front());
    if (!kind) {
        return fail(kind.error().message);
    }
    action.kind = *kind;
    text.remove_prefix(1);
    if (!readNumber(text, action.microbatch)) {
        return fail("missing micro-batch number");
    }
    if (action.kind == ActionKind::Update) {
        if (text.empty() || text.front() != ':') {
            return fail("an update needs ':<first>-<last>'");
        }
        text.remove_prefix(1);
        if (!readNumber(text, action.firstMb) || text.empty() || text.front() != '-') {
            return fail("an update needs ':<first>-<last>'");
        }
        text.remove_prefix(1);
        if (!readNumber(text, action.lastMb) || action.lastMb < action.firstMb) {
            return fail("an update needs ':<first>-<last>' with first <= last");
        }
    }
    if (!text.empty()) {
        return fail("unexpected trailing text '" + std::string(text) + "'");
    }
    return action;
}

} // namespace bs::runtime
