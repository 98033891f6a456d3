#include "backend/cuda/graph.h"

#include <vector>

#include "backend/cuda/check.h"
#include "theo/errors.h"

namespace theo::cuda {

namespace {

struct NodeCounts {
  std::size_t nodes = 0;
  std::size_t kernels = 0;
  std::size_t programmatic_edges = 0;
};

NodeCounts count_nodes(cudaGraph_t graph) {
  NodeCounts c;
  THEO_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &c.nodes));
  std::vector<cudaGraphNode_t> nodes(c.nodes);
  if (c.nodes > 0) THEO_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &c.nodes));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    THEO_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeKernel) ++c.kernels;
  }
  std::size_t edges = 0;
  THEO_CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  if (edges > 0) {
    std::vector<cudaGraphNode_t> from(edges), to(edges);
    std::vector<cudaGraphEdgeData> data(edges);
    THEO_CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &edges));
    for (std::size_t i = 0; i < edges; ++i)
      if (data[i].type == cudaGraphDependencyTypeProgrammatic) ++c.programmatic_edges;
  }
  return c;
}

// Owns a cudaGraph_t for the time between capture and instantiation.
struct GraphOwner {
  cudaGraph_t g = nullptr;
  ~GraphOwner() {
    if (g) cudaGraphDestroy(g);
  }
};

class GraphWork final : public CapturedWork {
 public:
  GraphWork(cudaGraphExec_t exec, std::shared_ptr<Device> dev, std::shared_ptr<CaptureArena> arena,
            NodeCounts counts)
      : exec_(exec), dev_(std::move(dev)), arena_(std::move(arena)), counts_(counts) {}
  // An executable graph still running is freed when it completes; the arena's memory goes back
  // stream-ordered (Device::free_bytes), after it.
  ~GraphWork() override { cudaGraphExecDestroy(exec_); }
  GraphWork(const GraphWork&) = delete;
  GraphWork& operator=(const GraphWork&) = delete;

  void replay() override {
    if (dev_->capturing())
      throw BackendError(
          "replay of captured work is not allowed while capturing (capture the whole sequence "
          "instead)");
    THEO_CUDA_CHECK(cudaGraphLaunch(exec_, dev_->stream()));
  }
  std::size_t kernel_count() const override { return counts_.kernels; }
  std::size_t node_count() const override { return counts_.nodes; }
  std::size_t programmatic_edge_count() const override { return counts_.programmatic_edges; }

 private:
  cudaGraphExec_t exec_;
  std::shared_ptr<Device> dev_;
  std::shared_ptr<CaptureArena> arena_;  // the temporaries and outputs the graph writes
  NodeCounts counts_;
};

}  // namespace

StreamCapture::StreamCapture(std::shared_ptr<Device> dev, std::shared_ptr<Allocator> upstream,
                             std::shared_ptr<CaptureWorkspace> workspace)
    : dev_(std::move(dev)) {
  dev_->synchronize();
  arena_ = std::make_shared<CaptureArena>(std::move(upstream), std::move(workspace));
  arena_->set_fork(&dev_->fork_state());
  dev_->set_capture(arena_.get());
  const cudaError_t err = cudaStreamBeginCapture(dev_->stream(), cudaStreamCaptureModeRelaxed);
  if (err != cudaSuccess) {
    dev_->set_capture(nullptr);
    arena_->close();
    throw_cuda_error(err, "cudaStreamBeginCapture", __FILE__, __LINE__);
  }
  open_ = true;
}

StreamCapture::~StreamCapture() {
  if (!open_) return;
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(dev_->stream(), &graph);
  if (graph) cudaGraphDestroy(graph);
  (void)cudaGetLastError();  // an invalidated capture leaves its error behind
  close();
}

void StreamCapture::close() noexcept {
  open_ = false;
  dev_->set_capture(nullptr);
  arena_->close();
}

std::unique_ptr<CapturedWork> StreamCapture::finish() {
  if (!open_) throw BackendError("end_capture: the capture is no longer open");
  GraphOwner graph;
  const cudaError_t err = cudaStreamEndCapture(dev_->stream(), &graph.g);
  close();
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw_cuda_error(err, "cudaStreamEndCapture", __FILE__, __LINE__);
  }
  const NodeCounts counts = count_nodes(graph.g);
  cudaGraphExec_t exec = nullptr;
  THEO_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.g, 0));
  auto work = std::make_unique<GraphWork>(exec, dev_, arena_, counts);
  // Moves the graph's launch resources to the device now rather than at the first replay.
  THEO_CUDA_CHECK(cudaGraphUpload(exec, dev_->stream()));
  return work;
}

}  // namespace theo::cuda
