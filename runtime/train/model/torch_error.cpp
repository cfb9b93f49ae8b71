#include "runtime/train/model/torch_error.h"

#include <c10/util/Exception.h>

namespace bs::runtime {

std::string torchErrorText(const std::exception& e)
{
    const auto* c10 = dynamic_cast<const c10::Error*>(&e);
    std::string text = c10 ? c10->what_without_backtrace() : e.what();
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.pop_back();
    }
    return text;
}

} // namespace bs::runtime
