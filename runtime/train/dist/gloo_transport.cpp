#include "runtime/train/dist/gloo_transport.h"

#include "runtime/train/dist/file_rendezvous.h"
#include "runtime/train/dist/listen_socket.h"
#include "runtime/train/model/hand_off_tensor_p.h"
#include "runtime/train/model/memory_tracker.h"

#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#ifdef USE_C10D_NCCL // set by the CUDA LibTorch's torch_cuda target
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace bs::runtime {

namespace {

constexpr const char* kFailureKey = "bs/failure";

// The class both Gloo's and NCCL's groups derive from (2.x split process groups into backends).
#if TORCH_VERSION_MAJOR >= 2
using PointToPoint = c10d::Backend;
#else
using PointToPoint = c10d::ProcessGroup;
#endif

const char* kindName(HandOffKind kind)
{
    return kind == HandOffKind::Activation ? "activation" : "gradient";
}

/// A file rendezvous' directory (a FileStore's, file_rendezvous.h), removed by the last rank out.
/// FileStore deletes its file only when every rank that opened it has left it, so a rank that was
/// killed left the directory in /tmp for good. Each rank instead holds a shared lock on a `lock`
/// file there from before its FileStore opens until after it is gone (the kernel drops a killed
/// rank's); leaving, it lets go and tries for the lock alone: whoever gets it is the last one out
/// (of two leaving at once, the later to let go does) and removes the store file, the lock and
/// the directory.
struct StoreDirectory
{
    std::string path;
    int lock = -1;

    /// Before this rank's FileStore on `storeFile` opens.
    void hold(const std::string& storeFile)
    {
        path = storeFile.substr(0, storeFile.rfind('/'));
        file = storeFile;
        lock = ::open((path + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (lock >= 0) {
            ::flock(lock, LOCK_SH);
        }
    }
    ~StoreDirectory() { leave(); }
    /// After this rank's FileStore has gone, or where it never will (a process about to exit).
    void leave() noexcept
    {
        if (path.empty()) {
            return;
        }
        if (lock >= 0) {
            ::flock(lock, LOCK_UN);
            if (::flock(lock, LOCK_EX | LOCK_NB) == 0) {
                ::unlink(file.c_str());
                ::unlink((path + "/lock").c_str());
            }
            ::close(lock);
        }
        ::rmdir(path.c_str()); // fails harmlessly while another rank is still there
        path.clear();
        lock = -1;
    }

private:
    std::string file;
};

/// The rendezvous store, listening nowhere it should not (listen_socket.h): a FileStore when the
/// launcher gave one; else a TCPStore whose server socket is bound to MASTER_ADDR itself. A
/// LibTorch whose TCPStore cannot bind an address (1.13) with a loopback MASTER_ADDR: a FileStore
/// whose path rank 0 serves on exactly MASTER_ADDR:MASTER_PORT (file_rendezvous.h); `server`
/// then holds rank 0's server.
c10::intrusive_ptr<c10d::Store> makeStore(const DistEnv& env, std::chrono::milliseconds timeout,
    std::unique_ptr<RendezvousFileServer>& server, StoreDirectory& servedDirectory)
{
    auto fileStore = [&](const std::string& file) {
        auto store = c10::make_intrusive<c10d::FileStore>(file, env.worldSize);
        store->setTimeout(timeout);
        return store;
    };
    if (const char* file = std::getenv(kRendezvousFileEnv); file && *file) {
        return fileStore(file);
    }
#if TORCH_VERSION_MAJOR < 2
    if (isLoopback(env.masterAddr)) {
        if (env.rank == 0) {
            auto started = RendezvousFileServer::start(env.masterAddr, env.masterPort);
            if (!started) {
                throw std::runtime_error(started.error().describe());
            }
            server = std::move(*started);
            servedDirectory.hold(server->path());
            return fileStore(server->path());
        }
        auto path = fetchRendezvousFile(env.masterAddr, env.masterPort, timeout);
        if (!path) {
            throw std::runtime_error(path.error().describe());
        }
        servedDirectory.hold(*path);
        return fileStore(*path);
    }
#else
    (void)server;
    (void)servedDirectory;
#endif
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(env.masterPort);
    so.isServer = env.rank == 0;
    so.numWorkers = static_cast<std::size_t>(env.worldSize);
    // Not waiting here for WORLD_SIZE clients: the identity exchange (connect) waits for each rank
    // by name, so a missing or mismatched rank is named instead of timing out anonymously.
    so.waitWorkers = false;
    so.timeout = timeout;
#if TORCH_VERSION_MAJOR >= 2
    if (so.isServer) { // LibTorch 2.x takes over a socket we bound to exactly MASTER_ADDR
        Result<int> fd = listenOn(env.masterAddr, env.masterPort);
        if (!fd) {
            throw std::runtime_error(fd.error().describe());
        }
        so.masterListenFd = *fd;
    }
#endif
    // LibTorch 1.13's TCPStore has no such option and binds every interface: multi-node runs
    // (MASTER_ADDR not loopback) still listen on *:PORT there (docs/RELIABILITY.md).
    return c10::make_intrusive<c10d::TCPStore>(env.masterAddr, so);
}

std::string text(const std::vector<std::uint8_t>& v)
{
    return std::string(v.begin(), v.end());
}
std::vector<std::uint8_t> bytes(const std::string& s)
{
    return std::vector<std::uint8_t>(s.begin(), s.end());
}

/// The first line of a LibTorch exception: c10::Error's what() carries a stack trace.
std::string firstLine(const std::exception& e)
{
    const auto* c10 = dynamic_cast<const c10::Error*>(&e);
    std::string s = c10 ? c10->what_without_backtrace() : e.what();
    return s.substr(0, s.find('\n'));
}

/// Every rank publishes its identity; rank 0 checks each rank's against its own, the others rank
/// 0's against theirs (GlooOptions::identity). A rank that finds a difference records it as the
/// run's failure; rank 0 hosts a TCPStore, so it stays until the others have read its identity
/// (bounded) lest they only see the store vanish.
Status checkSameRun(
    c10d::Store& store, const DistEnv& env, const std::string& identity, std::chrono::milliseconds timeout)
{
    const std::string self = "rank " + std::to_string(env.rank);
    auto fetch = [&](int k) -> Result<std::string> {
        const std::string key = "bs/identity/" + std::to_string(k);
        try {
            store.wait({key}, timeout);
            return text(store.get(key));
        } catch (const std::exception& e) {
            return makeError(ErrorCode::Unavailable,
                "rank " + std::to_string(k) + " did not join the rendezvous within "
                    + std::to_string(static_cast<double>(timeout.count()) / 1000.0).substr(0, 5) + " s (" + firstLine(e)
                    + ")",
                self + ", rendezvous");
        }
    };
    auto fail = [&](std::string message) -> Status {
        try {
            if (!store.check({"bs/failure"})) {
                store.set("bs/failure", bytes(message));
            }
        } catch (...) {}
        return makeError(ErrorCode::InvalidArgument, std::move(message), self + ", rendezvous");
    };
    store.set("bs/identity/" + std::to_string(env.rank), bytes(identity));
    if (env.rank != 0) {
        auto root = fetch(0);
        // Every store access of this rank comes before it says it has read rank 0's identity:
        // rank 0 may shut its store down right after, and a TCPStore client that finds the
        // server gone logs a warning with a stack trace (LibTorch 2.x) before it throws.
        Status result = ok();
        if (!root) {
            result = root.error();
        } else if (auto diff = identityDifference(identity, *root, "rank 0")) {
            result = fail(self + " was started with other settings than rank 0: " + *diff);
        }
        try {
            store.set("bs/identity-read/" + std::to_string(env.rank), bytes("1"));
        } catch (...) {}
        return result;
    }
    Status result = ok();
    for (int k = 1; k < env.worldSize && result; ++k) {
        auto other = fetch(k);
        if (!other) {
            return other.error(); // a rank that never came: nobody to wait for
        }
        if (auto diff = identityDifference(identity, *other, "rank " + std::to_string(k))) {
            result = fail("rank " + std::to_string(k) + " was started with other settings than rank 0: " + *diff);
        }
    }
    if (!result) { // let the others read rank 0's identity (and the report) before the store goes
        const auto until = std::chrono::steady_clock::now() + std::min(timeout, std::chrono::milliseconds(5000));
        for (int k = 1; k < env.worldSize; ++k) {
            try {
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
                if (left.count() > 0) {
                    store.wait({"bs/identity-read/" + std::to_string(k)}, left);
                }
            } catch (...) {}
        }
    }
    return result;
}

} // namespace

struct GlooTransport::Impl
{
    DistEnv env;
    GlooOptions options;
    std::unique_ptr<RendezvousFileServer> fileServer; // rank 0 of a file rendezvous (until all joined)
    StoreDirectory storeDirectory; // destroyed after the store below: the last rank out removes it
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
    struct PendingSend
    {
        c10::intrusive_ptr<c10d::Work> work;
        std::shared_ptr<HandOff> value; // the tensor's storage: kept alive until the send completes
        int to;
        std::int64_t microbatch;
        HandOffKind kind;
        at::Tensor onDevice; // NCCL: the GPU tensor being sent
    };
    // NCCL (see the header): one group per direction; undefined with Gloo tensors.
    c10::intrusive_ptr<PointToPoint> activations, gradients;
    std::map<std::pair<int, int>, std::int64_t> lastMicrobatch; // (kind, peer) -> last sent/received (NCCL order check)

    bool nccl() const { return activations.defined(); }
    PointToPoint& tensorGroup(HandOffKind kind)
    {
        if (!nccl()) {
            return *group;
        }
        return kind == HandOffKind::Activation ? *activations : *gradients;
    }
    at::Device device() const { return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(options.cudaDevice)); }

    // NCCL delivers in issue order: a call out of ascending micro-batch order would swap tensors.
    Status inOrder(HandOffKind kind, int peer, std::int64_t microbatch, const char* what)
    {
        if (!nccl()) {
            return ok();
        }
        auto [it, fresh] =
            lastMicrobatch.emplace(std::make_pair(kind == HandOffKind::Activation ? 0 : 1, peer), microbatch);
        if (!fresh && microbatch <= it->second) {
            return makeError(ErrorCode::Internal,
                std::string("NCCL needs ascending micro-batches per direction: ") + what + " of micro-batch "
                    + std::to_string(microbatch) + " after " + std::to_string(it->second)
                    + " (use --backend gloo for this schedule)",
                "rank " + std::to_string(env.rank) + ", peer " + std::to_string(peer));
        }
        it->second = microbatch;
        return ok();
    }
    std::vector<PendingSend> pending;
    // One receive buffer per shape, reused: a fresh multi-MiB tensor per message costs a page fault
    // per 4 KiB as the kernel copies into it, which halved Gloo's throughput (gloo_p2p_bench).
    std::map<std::vector<std::int64_t>, at::Tensor> recvBuffers;

    // The error of a failed exchange with `peer`: the recorded failure if another rank reported
    // one, else the peer is named.
    Error peerError(int peer, const std::string& what, const std::string& detail, GlooTransport& self)
    {
        const std::string at = "rank " + std::to_string(env.rank) + ", " + what;
        if (std::optional<std::string> report = self.failureReport()) {
            return makeError(ErrorCode::Unavailable, "the run failed: " + *report, at);
        }
        blamed = peer;
        return makeError(
            ErrorCode::Unavailable, "rank " + std::to_string(peer) + " failed or is unreachable (" + detail + ")", at);
    }
    std::optional<int> blamed; // the peer a failed exchange named (no report existed yet)

    // Completes finished sends; with `all`, waits for every one. NCCL: the tensors sent are the
    // stage's own (HandOffForm::Tensor), so their frees here are charged to this rank's stage.
    Status reap(bool all, GlooTransport& self)
    {
        const MemoryScope scope(nccl() ? env.rank : -1, MemoryCategory::Activations);
        for (auto it = pending.begin(); it != pending.end();) {
            try {
                if (!all && !it->work->isCompleted()) {
                    ++it;
                    continue;
                }
                it->work->wait(options.timeout);
            } catch (const std::exception& e) {
                const PendingSend failed = *it;
                pending.clear();
                return peerError(failed.to,
                    std::string("sending the ") + kindName(failed.kind) + " of micro-batch "
                        + std::to_string(failed.microbatch),
                    firstLine(e), self);
            }
            it = pending.erase(it);
        }
        return ok();
    }
};

GlooTransport::GlooTransport(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{}

GlooTransport::~GlooTransport() = default;

Result<std::shared_ptr<GlooTransport>> GlooTransport::connect(const DistEnv& env, const GlooOptions& options)
{
    auto impl = std::make_unique<Impl>();
    impl->env = env;
    impl->options = options;
    const std::string where = "rendezvous at " + env.masterAddr + ":" + std::to_string(env.masterPort) + ", rank "
        + std::to_string(env.rank) + " of " + std::to_string(env.worldSize);
    try {
        impl->store = makeStore(env, options.rendezvousTimeout, impl->fileServer, impl->storeDirectory);
        if (!options.identity.empty()) {
            if (Status same = checkSameRun(*impl->store, env, options.identity, options.rendezvousTimeout); !same) {
                return same.error();
            }
        }
        auto opts = c10d::ProcessGroupGloo::Options::create(options.timeout);
        // This rank's own endpoint (dist_env.h), not MASTER_ADDR: on several machines each rank
        // listens where its peers can reach it.
        const GlooEndpoint endpoint = glooEndpoint(env);
        opts->devices.push_back(endpoint.kind == GlooEndpoint::Kind::Interface
                ? c10d::ProcessGroupGloo::createDeviceForInterface(endpoint.value)
                : endpoint.kind == GlooEndpoint::Kind::Hostname
                ? c10d::ProcessGroupGloo::createDeviceForHostname(endpoint.value)
                : c10d::ProcessGroupGloo::createDefaultDevice());
        impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank, env.worldSize, opts);
        if (impl->fileServer) {
            impl->fileServer->stop(); // every rank has joined the group: the path is no longer needed
        }
        if (options.nccl) {
#ifdef USE_C10D_NCCL
            if (options.cudaDevice < 0) {
                return makeError(ErrorCode::InvalidArgument, "--backend nccl needs this rank's CUDA device", where);
            }
            const c10::DeviceGuard onGpu(impl->device());
            auto ncclOptions = c10d::ProcessGroupNCCL::Options::create();
            ncclOptions->timeout = options.timeout;
            impl->activations = c10::make_intrusive<c10d::ProcessGroupNCCL>(
                c10::make_intrusive<c10d::PrefixStore>("bs/nccl/activations", impl->store), env.rank, env.worldSize,
                ncclOptions);
            impl->gradients = c10::make_intrusive<c10d::ProcessGroupNCCL>(
                c10::make_intrusive<c10d::PrefixStore>("bs/nccl/gradients", impl->store), env.rank, env.worldSize,
                ncclOptions);
#else
            return makeError(ErrorCode::InvalidArgument,
                "--backend nccl: this LibTorch has no c10d ProcessGroupNCCL (a CPU-only build); use --backend gloo",
                "--backend");
#endif
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Unavailable, "c10d rendezvous failed: " + firstLine(e), where);
    }
    return std::shared_ptr<GlooTransport>(new GlooTransport(std::move(impl)));
}

bool ncclTransportBuilt()
{
#ifdef USE_C10D_NCCL
    return true;
#else
    return false;
#endif
}

int GlooTransport::rank() const
{
    return m_impl->env.rank;
}
int GlooTransport::worldSize() const
{
    return m_impl->env.worldSize;
}

Status GlooTransport::send(HandOffKind kind, int toStage, std::int64_t microbatch, HandOff value)
{
    Impl& d = *m_impl;
    if (Status s = d.reap(false, *this); !s) {
        return s;
    }
    if (Status s = d.inOrder(kind, toStage, microbatch, "send"); !s) {
        return s;
    }
    try {
        // Gloo: sent straight from the hand-off's own vector (no copy); it lives in `pending` until
        // done. NCCL: the stage's GPU tensor itself (handOffForm() asks for it), no host copy; NCCL's
        // stream waits for the stage's current stream, where the tensor was produced. fp32 is its own
        // dtype under bf16 too (the residual stream: HandOff.Bf16StagesHandOverFp32Tensors).
        auto held = std::make_shared<HandOff>(std::move(value));
        at::Tensor onDevice;
        std::optional<c10::DeviceGuard> onGpu;
        std::vector<at::Tensor> tensors;
        if (d.nccl()) {
            onGpu.emplace(d.device());
            const MemoryScope scope(d.env.rank, MemoryCategory::Activations); // a conversion is the stage's
            onDevice = held->tensor ? held->tensor->tensor.to(d.device(), at::kFloat).contiguous()
                                    : at::from_blob(held->values.data(), held->shape, at::kFloat).to(d.device());
            tensors.push_back(onDevice);
            held.reset(); // onDevice holds the storage now
        } else {
            if (!held->onHost()) { // a tensor for Gloo: its host values (handOffForm() is HostValues, so never in a
                                   // run)
                const at::Tensor host = held->tensor->tensor.to(at::kCPU, at::kFloat).contiguous();
                held->values.assign(host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
                held->tensor.reset();
            }
            tensors.push_back(at::from_blob(held->values.data(), held->shape, at::kFloat));
        }
        auto work = d.tensorGroup(kind).send(tensors, toStage, static_cast<int>(handOffTag(kind, microbatch)));
        d.pending.push_back({work, std::move(held), toStage, microbatch, kind, onDevice});
    } catch (const std::exception& e) {
        return d.peerError(toStage,
            std::string("sending the ") + kindName(kind) + " of micro-batch " + std::to_string(microbatch),
            firstLine(e), *this);
    }
    return ok();
}

Result<HandOff> GlooTransport::recv(
    HandOffKind kind, int fromStage, std::int64_t microbatch, const std::vector<std::int64_t>& shape)
{
    Impl& d = *m_impl;
    if (Status s = d.reap(false, *this); !s) {
        return s.error();
    }
    if (Status s = d.inOrder(kind, fromStage, microbatch, "receive"); !s) {
        return s.error();
    }
    try {
        std::optional<c10::DeviceGuard> onGpu;
        if (d.nccl()) {
            onGpu.emplace(d.device());
        }
        if (d.nccl()) {
            // A fresh buffer on this rank's GPU (the stage keeps it as its input), charged to the
            // stage. wait() makes the current stream wait for the receive, not the host: the
            // stage's next kernels queue behind it, and the tensor never visits host memory.
            at::Tensor buffer;
            {
                const MemoryScope scope(d.env.rank, MemoryCategory::Activations);
                buffer = at::empty(shape, at::TensorOptions().dtype(at::kFloat).device(d.device()));
            }
            std::vector<at::Tensor> tensors{buffer};
            auto work = d.tensorGroup(kind).recv(tensors, fromStage, static_cast<int>(handOffTag(kind, microbatch)));
            // No timeout argument: with one, WorkNCCL::wait blocks the host until the receive
            // completes (ProcessGroupNCCL.hpp: "Same as calling synchronize() for NCCL work if
            // timeout is not set. Otherwise, it will block the CPU thread..."). The process
            // group's own timeout (its watchdog) still bounds a receive that never comes.
            work->wait();
            return handOffOf(std::move(buffer));
        }
        at::Tensor& buffer = d.recvBuffers[shape];
        if (!buffer.defined()) {
            buffer = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
        }
        std::vector<at::Tensor> tensors{buffer};
        auto work = d.tensorGroup(kind).recv(tensors, fromStage, static_cast<int>(handOffTag(kind, microbatch)));
        work->wait(d.options.timeout);
        const at::Tensor& host = tensors[0];
        HandOff out;
        out.shape = shape;
        const float* p = host.data_ptr<float>();
        out.values.assign(p, p + host.numel());
        return out;
    } catch (const std::exception& e) {
        const std::string detail = firstLine(e);
        return d.peerError(fromStage,
            std::string("waiting for the ") + kindName(kind) + " of micro-batch " + std::to_string(microbatch),
            detail + "; timeout " + std::to_string(d.options.timeout.count()) + " ms", *this);
    }
}

Status GlooTransport::flush()
{
    return m_impl->reap(true, *this);
}

HandOffForm GlooTransport::handOffForm() const
{
    return m_impl->nccl() ? HandOffForm::Tensor : HandOffForm::HostValues;
}

Status GlooTransport::barrier()
{
    try {
        m_impl->group->barrier()->wait(m_impl->options.timeout);
    } catch (const std::exception& e) {
        const std::string detail = firstLine(e);
        if (std::optional<std::string> report = failureReport()) {
            return makeError(ErrorCode::Unavailable, "the run failed: " + *report, "barrier");
        }
        return makeError(ErrorCode::Unavailable, "a rank did not reach the barrier: " + detail,
            "rank " + std::to_string(m_impl->env.rank) + ", barrier");
    }
    return ok();
}

Status GlooTransport::publish(const std::string& key, const std::string& value)
{
    try {
        m_impl->store->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Unavailable, "the rendezvous store is unreachable: " + firstLine(e), key);
    }
    return ok();
}

Result<std::string> GlooTransport::fetch(const std::string& key)
{
    try {
        m_impl->store->wait({key}, m_impl->options.timeout);
        const std::vector<std::uint8_t> v = m_impl->store->get(key);
        return std::string(v.begin(), v.end());
    } catch (const std::exception& e) {
        const std::string detail = firstLine(e);
        if (std::optional<std::string> report = failureReport()) {
            return makeError(ErrorCode::Unavailable, "the run failed: " + *report, key);
        }
        return makeError(ErrorCode::Unavailable, "no rank published '" + key + "' in time: " + detail, key);
    }
}

void GlooTransport::leaveRendezvous() noexcept
{
    m_impl->storeDirectory.leave();
}

void GlooTransport::reportFailure(const std::string& message) noexcept
{
    try {
        if (!m_impl->store->check({kFailureKey})) {
            // The rank at fault comes first: a peer this rank lost, else this rank itself.
            const std::string self = "rank " + std::to_string(m_impl->env.rank);
            const std::string v =
                m_impl->blamed ? message : self + ": " + message; // the former's context names this rank
            m_impl->store->set(kFailureKey, std::vector<std::uint8_t>(v.begin(), v.end()));
        }
    } catch (...) { // the store's host (rank 0) may be gone: nothing more to tell
    }
}

std::optional<std::string> GlooTransport::failureReport() noexcept
{
    try {
        if (m_impl->store->check({kFailureKey})) {
            const std::vector<std::uint8_t> v = m_impl->store->get(kFailureKey);
            return std::string(v.begin(), v.end());
        }
    } catch (...) {}
    return std::nullopt;
}

} // namespace bs::runtime
