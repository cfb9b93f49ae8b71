#pragma once
// One unit of stage work, written like PyTorch pipelining's action strings: "3F12" is stage 3,
// forward, micro-batch 12. Micro-batch ids are global over the run (batch n holds n*m .. n*m+m-1).

#include "base/result.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace bs::runtime {

enum class ActionKind : std::uint8_t
{
    Forward, ///< F
    Backward, ///< B: input- and weight-gradient in one pass
    BackwardInput, ///< I: input-gradient only (zero-bubble split)
    BackwardWeight, ///< W: weight-gradient only (zero-bubble split)
    Update, ///< U: optimizer step applying the gradients of micro-batches [firstMb, lastMb]
    /// DualPipe's overlapped pair: the forward of (stage, microbatch) and the full backward of
    /// (pairStage, pairMicrobatch) on one rank at once, so one's compute hides the other's comm.
    /// Its own cost in the cost model (StageCost::overlapped). PyTorch writes it "(0F3;1B2)OVERLAP_F_B".
    OverlapForwardBackward,
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
    /// OverlapForwardBackward only: the backward half's stage and micro-batch.
    int pairStage = -1;
    int pairMicrobatch = -1;

    bool isBackwardLike() const { return kind == ActionKind::Backward || kind == ActionKind::BackwardInput; }
    bool isOverlap() const { return kind == ActionKind::OverlapForwardBackward; }
    /// The forward half of an overlapped pair (as a plain F), for code that walks single actions.
    Action forwardHalf() const { return {stage, ActionKind::Forward, microbatch}; }
    /// The backward half of an overlapped pair (as a plain B).
    Action backwardHalf() const { return {pairStage, ActionKind::Backward, pairMicrobatch}; }
    friend bool operator==(const Action&, const Action&) = default;
};

inline Action forward(int stage, int mb)
{
    return {stage, ActionKind::Forward, mb};
}
inline Action backward(int stage, int mb)
{
    return {stage, ActionKind::Backward, mb};
}
inline Action backwardInput(int stage, int mb)
{
    return {stage, ActionKind::BackwardInput, mb};
}
inline Action backwardWeight(int stage, int mb)
{
    return {stage, ActionKind::BackwardWeight, mb};
}
inline Action update(int stage, int index, int firstMb, int lastMb)
{
    return {stage, ActionKind::Update, index, firstMb, lastMb};
}

inline Action overlapForwardBackward(int forwardStage, int forwardMb, int backwardStage, int backwardMb)
{
    Action a{forwardStage, ActionKind::OverlapForwardBackward, forwardMb};
    a.pairStage = backwardStage;
    a.pairMicrobatch = backwardMb;
    return a;
}

/// Calls f(part) for each plain action `action` performs: itself, or an overlapped pair's F then B.
template<typename F>
void forEachPart(const Action& action, F&& f)
{
    if (action.isOverlap()) {
        f(action.forwardHalf());
        f(action.backwardHalf());
    } else {
        f(action);
    }
}

/// "3F12", "0I4", "7W3"; updates as "2U1:8-15" (stage 2, update 1, micro-batches 8..15);
/// an overlapped pair as PyTorch writes it, "(0F3;1B2)OVERLAP_F_B".
std::string toString(const Action& action);

/// Parses the form written by toString(). Errors name the text and what was expected.
Result<Action> parseAction(std::string_view text);

} // namespace bs::runtime
