#include "runtime/train/module/module_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <system_error>

#ifndef BS_BUILD_MODULE_DIR
#define BS_BUILD_MODULE_DIR ""
#endif
#ifndef BS_INSTALL_MODULE_DIR
#define BS_INSTALL_MODULE_DIR ""
#endif
#ifndef BS_INSTALL_LIBDIR
#define BS_INSTALL_LIBDIR "lib"
#endif
#ifndef BS_PROJECT_VERSION
#define BS_PROJECT_VERSION ""
#endif

namespace bs::runtime {

namespace {

namespace fs = std::filesystem;

constexpr const char* kCpuModule = "libbubblescope-runtime-cpu.so";
constexpr const char* kCudaModule = "libbubblescope-runtime-cuda.so";

bool isCudaDevice(std::string_view name)
{
    return name.substr(0, 4) == "cuda";
}

fs::path executableDir()
{
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path{} : exe.parent_path();
}

std::string joinDirs(const std::vector<fs::path>& dirs)
{
    std::string out;
    for (const fs::path& d : dirs) {
        out += (out.empty() ? "" : ", ") + d.string();
    }
    return out.empty() ? "(no directory)" : out;
}

struct LoadedModules
{
    std::mutex mutex;
    std::map<std::string, const RuntimeModuleApi*> byPath; // never unloaded (see the API header)
};

LoadedModules& loaded()
{
    static LoadedModules* modules = new LoadedModules; // leaked: used until exit
    return *modules;
}

Result<const RuntimeModuleApi*> open(const fs::path& file)
{
    LoadedModules& modules = loaded();
    std::lock_guard lock(modules.mutex);
    if (auto it = modules.byPath.find(file.string()); it != modules.byPath.end()) {
        return it->second;
    }
    // RTLD_LOCAL: torch's symbols stay out of the program's global scope; libstdc++ is already
    // global, so the module and libtorch bind to it (PyPI's libtorch exports its own copies of
    // some libstdc++ functions, which must not win; see the root CMakeLists.txt).
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        return makeError(ErrorCode::Unavailable,
            "cannot load the training runtime module " + file.string() + ": " + (why ? why : "?"));
    }
    using Entry = const RuntimeModuleApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, BS_RUNTIME_MODULE_ENTRY));
    const RuntimeModuleApi* api = entry ? entry() : nullptr;
    if (api == nullptr || api->abi != kRuntimeModuleAbi || api->layoutKey != runtimeModuleLayoutKey()
        || std::string_view(api->version) != BS_PROJECT_VERSION) {
        dlclose(handle); // nothing of it was used
        return makeError(ErrorCode::Unavailable,
            "the training runtime module " + file.string()
                + " is from another build of Bubblescope: rebuild or reinstall it");
    }
    modules.byPath.emplace(file.string(), api);
    return api;
}

} // namespace

std::vector<fs::path> runtimeModuleSearchPath()
{
    if (const char* dir = std::getenv("BS_RUNTIME_MODULE_DIR"); dir != nullptr && *dir != '\0') {
        return {fs::path(dir)};
    }
    std::vector<fs::path> dirs;
    auto add = [&](const fs::path& d) {
        if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) {
            dirs.push_back(d);
        }
    };
    const fs::path exeDir = executableDir();
    if (!exeDir.empty()) {
        add(exeDir);
        add((exeDir.parent_path() / BS_INSTALL_LIBDIR / "bubblescope").lexically_normal());
    }
    add(fs::path(BS_BUILD_MODULE_DIR));
    add(fs::path(BS_INSTALL_MODULE_DIR));
    return dirs;
}

std::string cudaModuleMissing()
{
    for (const fs::path& dir : runtimeModuleSearchPath()) {
        std::error_code ec;
        if (fs::is_regular_file(dir / kCudaModule, ec)) {
            return {};
        }
    }
    return "no CUDA runtime module built (this build's LibTorch is CPU-only); scripts/demo.sh builds it where it "
           "finds an NVIDIA GPU";
}

std::vector<std::string> runtimeModuleNames(std::string_view deviceName)
{
    if (isCudaDevice(deviceName)) {
        return {kCudaModule};
    }
    return {kCpuModule, kCudaModule};
}

Result<const RuntimeModuleApi*> loadRuntimeModule(std::string_view deviceName)
{
    const std::vector<fs::path> dirs = runtimeModuleSearchPath();
    const std::vector<std::string> names = runtimeModuleNames(deviceName);
    for (const std::string& name : names) {
        for (const fs::path& dir : dirs) {
            std::error_code ec;
            if (fs::is_regular_file(dir / name, ec)) {
                return open(dir / name);
            }
        }
    }
    if (isCudaDevice(deviceName)) {
        // The same words the CUDA module uses for a LibTorch without CUDA (device_plan.cpp), so a
        // user sees one message whichever build they run.
        return makeError(ErrorCode::InvalidArgument,
            "device '" + std::string(deviceName) + "': this LibTorch build is CPU-only (no CUDA runtime module: "
                + std::string(kCudaModule) + " is in none of " + joinDirs(dirs)
                + "); train with --device cpu, or build against a CUDA LibTorch (cmake --preset cuda)",
            "device.name");
    }
    const std::string device = "device.name = \"" + std::string(deviceName) + "\": ";
    return makeError(ErrorCode::InvalidArgument,
        device + "the training runtime module is missing (" + std::string(kCpuModule) + " or " + kCudaModule
            + " is in none of " + joinDirs(dirs) + ")");
}

} // namespace bs::runtime
