#include "runtime/schedule/action.h"

#include <charconv>

namespace bs::runtime {

char actionLetter(ActionKind kind)
{
    switch (kind) {
    case ActionKind::Forward: return 'F';
    case ActionKind::Backward: return 'B';
    case ActionKind::BackwardInput: return 'I';
    case ActionKind::BackwardWeight: return 'W';
    case ActionKind::Update: return 'U';
    }
    return '?';
}

std::string_view actionKindName(ActionKind kind)
{
    switch (kind) {
    case ActionKind::Forward: return "forward";
    case ActionKind::Backward: return "backward";
    case ActionKind::BackwardInput: return "backward-input";
    case ActionKind::BackwardWeight: return "backward-weight";
    case ActionKind::Update: return "update";
    }
    return "unknown";
}

std::string toString(const Action& action)
{
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
    case 'F': return ActionKind::Forward;
    case 'B': return ActionKind::Backward;
    case 'I': return ActionKind::BackwardInput;
    case 'W': return ActionKind::BackwardWeight;
    case 'U': return ActionKind::Update;
    default: return makeError(ErrorCode::ParseError, std::string("unknown action letter '") + letter + "'",
                              "allowed: F, B, I, W, U");
    }
}

} // namespace

Result<Action> parseAction(std::string_view text)
{
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
