#pragma once
// One unit of stage work, written like PyTorch pipelining's action strings: "3F12" is stage 3,
// forward, micro-batch 12. Micro-batch ids are global over the run (batch n holds n*m .. n*m+m-1).

#include "base/result.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace bs::runtime {

enum class ActionKind : std::uint8_t {
    Forward,        ///< F
    Backward,       ///< B: input- and weight-gradient in one pass
    BackwardInput,  ///< I: input-gradient only (zero-bubble split)
    BackwardWeight, ///< W: weight-gradient only (zero-bubble split)
    Update,         ///< U: optimizer step applying the gradients of micro-batches [firstMb, lastMb]
};

char actionLetter(ActionKind kind);
std::string_view actionKindName(ActionKind kind);

struct Action
{
    int stage = 0;
    ActionKind kind = ActionKind::Forward;
    /// F/B/I/W: the micro-batch. U: the update's index on this stage (0, 1, ...).
    int microbatch = 0;
    /// U only: the micro-batches whose gradients this update applies (inclusive range).
    int firstMb = -1;
    int lastMb = -1;

    bool isBackwardLike() const { return kind == ActionKind::Backward || kind == ActionKind::BackwardInput; }
    friend bool operator==(const Action&, const Action&) = default;
};

inline Action forward(int stage, int mb) { return {stage, ActionKind::Forward, mb}; }
inline Action backward(int stage, int mb) { return {stage, ActionKind::Backward, mb}; }
inline Action backwardInput(int stage, int mb) { return {stage, ActionKind::BackwardInput, mb}; }
inline Action backwardWeight(int stage, int mb) { return {stage, ActionKind::BackwardWeight, mb}; }
inline Action update(int stage, int index, int firstMb, int lastMb)
{
    return {stage, ActionKind::Update, index, firstMb, lastMb};
}

/// "3F12", "0I4", "7W3"; updates as "2U1:8-15" (stage 2, update 1, micro-batches 8..15).
std::string toString(const Action& action);

/// Parses the form written by toString(). Errors name the text and what was expected.
Result<Action> parseAction(std::string_view text);

} // namespace bs::runtime
