// mesh_graph.cpp — the graph side of nuce's C API (docs/c-api.md) from C++17:
// an unstructured mesh read from a Gmsh file, partitioned by the ranks'
// measured speeds, smoothed by Jacobi sweeps with ghost exchanges, remapped
// when a rank slows down, and checked bit for bit against a serial run.
//
// Rank 0 reads a Gmsh MSH 2.2 ASCII mesh (`gmsh -2 x.geo -format msh22`) and
// builds its vertex graph (two nodes are neighbours when an element of
// dimension 2 or 3 has them on a common edge). nuce_graph_scatter partitions
// it for the measured speeds and scatters one 16-byte record per vertex
// {value, global id}; with `--best` the graph is then moved to nuce's best
// partition (nuce_graph_partition + nuce_graph_migrate). Each sweep sets every value to
// the mean of itself and its neighbours, summed in the global CSR order, so
// the result does not depend on the partition. Between phases
// nuce_graph_maybe_remap_ahead measures the ranks and moves vertices when
// that pays off. At the end the records are gathered on rank 0 and compared
// with a serial run.
//
// `--slowdown R:F@P` makes rank R really do every sweep F times from phase P
// on (nuce is not told: it measures).
//
//   mpicxx -std=c++17 -O2 -DOMPI_SKIP_MPICXX examples/cpp/mesh_graph.cpp
//     $(pkg-config --cflags --libs nuce) -Wl,-rpath,$PREFIX/lib -o mesh_graph
//   mpirun -np 2 ./mesh_graph --mesh square.msh --phases 6 --sweeps 30 --slowdown 1:4@1
#include <mpi.h>
#include <nuce.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int rank = 0;

// Every nuce call returns the same code on every rank when it fails: every
// rank stops here together.
void check(int rc, const char *what) {
  if (rc != NUCE_OK) {
    if (rank == 0) std::fprintf(stderr, "mesh_graph: %s failed (code %d): %s\n", what, rc, nuce_last_error());
    MPI_Finalize();
    std::exit(2);
  }
}
#define CHECK(call) check((call), #call)

// One vertex record, moved by nuce as 16 opaque bytes.
struct Record {
  double u;
  int64_t gid;
};
static_assert(sizeof(Record) == 16, "records are 16 bytes");

// The vertex graph of a mesh in METIS CSR form, with 2D coordinates.
struct Mesh {
  std::vector<int64_t> xadj{0}, adjncy;
  std::vector<double> xy;
  int64_t n() const { return static_cast<int64_t>(xadj.size()) - 1; }
};

// Reads a Gmsh MSH 2.2 ASCII file: nodes, and the edges of its 2D and 3D
// elements (triangles, quadrangles, tetrahedra, hexahedra).
Mesh read_msh(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::map<long, int64_t> index;  // Gmsh node id → vertex
  std::vector<std::vector<int64_t>> nbrs;
  Mesh m;
  std::string line;
  auto link = [&](int64_t a, int64_t b) {
    if (a == b) return;
    nbrs[a].push_back(b);
    nbrs[b].push_back(a);
  };
  while (std::getline(in, line)) {
    if (line.rfind("$MeshFormat", 0) == 0) {
      std::getline(in, line);
      if (line.rfind("2.2 0", 0) != 0) throw std::runtime_error(path + ": not an ASCII MSH 2.2 file");
    } else if (line.rfind("$Nodes", 0) == 0) {
      long count = 0;
      in >> count;
      nbrs.resize(count);
      for (long i = 0; i < count; i++) {
        long id;
        double x, y, z;
        if (!(in >> id >> x >> y >> z)) throw std::runtime_error(path + ": bad node");
        index[id] = i;
        m.xy.push_back(x);
        m.xy.push_back(y);
      }
    } else if (line.rfind("$Elements", 0) == 0) {
      long count = 0;
      in >> count;
      std::getline(in, line);
      for (long e = 0; e < count && std::getline(in, line); e++) {
        std::istringstream s(line);
        long id, type, ntags, tag;
        s >> id >> type >> ntags;
        for (long t = 0; t < ntags; t++) s >> tag;
        std::vector<int64_t> v;
        for (long node; s >> node;) {
          auto it = index.find(node);
          if (it == index.end()) throw std::runtime_error(path + ": element with an unknown node");
          v.push_back(it->second);
        }
        // Edges: cycles for triangles and quadrangles, all pairs for
        // tetrahedra, the 12 edges of a hexahedron.
        if ((type == 2 && v.size() == 3) || (type == 3 && v.size() == 4)) {
          for (size_t k = 0; k < v.size(); k++) link(v[k], v[(k + 1) % v.size()]);
        } else if (type == 4 && v.size() == 4) {
          for (size_t a = 0; a < 4; a++)
            for (size_t b = a + 1; b < 4; b++) link(v[a], v[b]);
        } else if (type == 5 && v.size() == 8) {
          for (size_t k = 0; k < 4; k++) {
            link(v[k], v[(k + 1) % 4]);
            link(v[4 + k], v[4 + (k + 1) % 4]);
            link(v[k], v[k + 4]);
          }
        }
      }
    }
  }
  if (nbrs.empty()) throw std::runtime_error(path + ": no nodes");
  for (auto &l : nbrs) {
    std::sort(l.begin(), l.end());
    l.erase(std::unique(l.begin(), l.end()), l.end());
    m.adjncy.insert(m.adjncy.end(), l.begin(), l.end());
    m.xadj.push_back(static_cast<int64_t>(m.adjncy.size()));
  }
  return m;
}

double initial(double x, double y) { return std::sin(3.0 * x) * std::cos(2.0 * y) + 0.1 * x; }

// One sweep over `count` vertices: the mean of a vertex and its neighbours
// (`nbr` gives the value of a neighbour entry), neighbours in CSR order.
template <class Value>
void sweep(int64_t count, const int64_t *xadj, const int64_t *adj, const Value &value, const double *self,
           double *out) {
  for (int64_t v = 0; v < count; v++) {
    double s = self[v];
    for (int64_t a = xadj[v]; a < xadj[v + 1]; a++) s += value(adj[a]);
    out[v] = s / static_cast<double>(1 + xadj[v + 1] - xadj[v]);
  }
}

std::vector<double> serial(const Mesh &m, int64_t sweeps) {
  const int64_t n = m.n();
  std::vector<double> u(n), next(n);
  for (int64_t v = 0; v < n; v++) u[v] = initial(m.xy[2 * v], m.xy[2 * v + 1]);
  for (int64_t t = 0; t < sweeps; t++) {
    sweep(n, m.xadj.data(), m.adjncy.data(), [&](int64_t w) { return u[w]; }, u.data(), next.data());
    u.swap(next);
  }
  return u;
}

// This rank's part: the application's own buffers, sized from nuce's layout.
struct Local {
  size_t owned = 0, ghosts = 0, arcs = 0;
  std::vector<int64_t> xadj, adj;
  std::vector<Record> slots;  // owned records, then ghosts
  std::vector<double> self, next;

  // (Re)builds the buffers for the graph's current layout and copies this
  // rank's records into them: after the scatter and after every move.
  void load(nuce_graph *g) {
    CHECK(nuce_graph_sizes(g, &owned, &ghosts, &arcs));
    xadj.assign(owned + 1, 0);
    adj.assign(std::max<size_t>(arcs, 1), 0);
    slots.assign(std::max<size_t>(owned + ghosts, 1), Record{0.0, -1});
    CHECK(nuce_graph_adjacency(g, xadj.data(), xadj.size(), adj.data(), nullptr, arcs));
    CHECK(nuce_graph_read(g, slots.data(), owned + ghosts));
    std::vector<int64_t> ids(std::max<size_t>(owned, 1));
    CHECK(nuce_graph_owned(g, ids.data(), owned));
    for (size_t i = 0; i < owned; i++)
      if (slots[i].gid != ids[i]) throw std::runtime_error("a record arrived at the wrong vertex");
    self.resize(owned);
    next.resize(owned);
  }
};

struct Slow {
  int rank, factor, phase;
};

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string path;
  int64_t phases = 6, sweeps = 30;
  bool best = false;
  std::vector<Slow> slow;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--mesh") path = v, i++;
    else if (a == "--phases") phases = std::atoll(v.c_str()), i++;
    else if (a == "--sweeps") sweeps = std::atoll(v.c_str()), i++;
    else if (a == "--best") best = true;
    else if (a == "--slowdown") {
      Slow s{0, 1, 0};
      if (std::sscanf(v.c_str(), "%d:%d@%d", &s.rank, &s.factor, &s.phase) < 2) {
        if (rank == 0) std::fprintf(stderr, "mesh_graph: bad --slowdown %s: expected R:F@P\n", v.c_str());
        MPI_Finalize();
        return 2;
      }
      slow.push_back(s);
      i++;
    } else {
      if (rank == 0) std::fprintf(stderr, "mesh_graph: unknown argument %s\n", a.c_str());
      MPI_Finalize();
      return 2;
    }
  }

  // Rank 0 reads the mesh; a failure is reported through nuce's agreement
  // (a NULL graph on the root is the same error on every rank).
  Mesh mesh;
  std::vector<Record> records;
  nuce_csr csr{};
  const nuce_csr *root_graph = nullptr;
  if (rank == 0) {
    try {
      mesh = read_msh(path);
      for (int64_t v = 0; v < mesh.n(); v++) records.push_back({initial(mesh.xy[2 * v], mesh.xy[2 * v + 1]), v});
      csr.n = mesh.n();
      csr.xadj = mesh.xadj.data();
      csr.adjncy = mesh.adjncy.data();
      csr.dim = 2;
      csr.coords = mesh.xy.data();
      root_graph = &csr;
    } catch (const std::exception &e) {
      std::fprintf(stderr, "mesh_graph: %s\n", e.what());
    }
  }

  // The application's own collectives count as compute for nuce's automatic
  // timing (waiting in them included): this one comes before the first
  // balance point.
  int64_t n = mesh.n();
  MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);

  nuce_balancer *b = nullptr;
  CHECK(nuce_balancer_create(MPI_COMM_WORLD, &b));
  CHECK(nuce_measure(b));
  nuce_graph *g = nullptr;
  CHECK(nuce_graph_scatter(b, root_graph, sizeof(Record), records.data(), &g));
  Local loc;
  loc.load(g);

  // With --best: the best partition for the same speeds (computed on the
  // root, replicated for nuce_graph_migrate), instead of the cut of nuce's
  // index ordering. Later remaps re-cut the ordering, so they would move
  // most vertices back: with --best they rarely pay off.
  if (best) {
    std::vector<int64_t> part(n);
    double cut = 0.0;
    CHECK(nuce_graph_partition(b, root_graph, NUCE_ALGO_BEST, part.data(), &cut));
    MPI_Bcast(part.data(), static_cast<int>(n), MPI_INT64_T, 0, MPI_COMM_WORLD);
    CHECK(nuce_graph_migrate(g, loc.slots.data(), loc.owned + loc.ghosts, part.data(), part.size()));
    loc.load(g);
    if (rank == 0) std::printf("mesh_graph: moved to the best partition (cut %.0f)\n", cut);
  }
  if (rank == 0) std::printf("mesh_graph: %lld vertices\n", (long long)n);

  int remaps = 0;
  std::vector<unsigned long long> owned(size);
  for (int64_t phase = 0; phase < phases; phase++) {
    int factor = 1, from = -1;
    for (const Slow &s : slow)
      if (s.rank == rank && s.phase <= phase && s.phase > from) from = s.phase, factor = std::max(s.factor, 1);
    double t0 = MPI_Wtime();
    for (int64_t t = 0; t < sweeps; t++) {
      CHECK(nuce_graph_exchange_ghosts(g, loc.slots.data(), loc.owned + loc.ghosts));
      for (size_t i = 0; i < loc.owned; i++) loc.self[i] = loc.slots[i].u;
      for (int f = 0; f < factor; f++) {
        sweep(static_cast<int64_t>(loc.owned), loc.xadj.data(), loc.adj.data(),
              [&](int64_t s) { return loc.slots[s].u; }, loc.self.data(), loc.next.data());
        __asm__ volatile("" ::: "memory");  // every repetition really computes
      }
      for (size_t i = 0; i < loc.owned; i++) loc.slots[i].u = loc.next[i];
    }
    double per_sweep = (MPI_Wtime() - t0) / static_cast<double>(sweeps), worst = 0.0;
    int remapped = 0;
    int64_t ahead = sweeps * std::max<int64_t>(phases - phase - 1, 1);
    CHECK(nuce_graph_maybe_remap_ahead(b, g, sweeps, ahead, loc.slots.data(), loc.owned + loc.ghosts, &remapped));
    if (remapped) {
      loc.load(g);
      remaps++;
    }
    std::vector<double> speeds(size);
    CHECK(nuce_speeds(b, speeds.data(), speeds.size()));
    MPI_Reduce(&per_sweep, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    unsigned long long mine = loc.owned;
    MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, owned.data(), 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("phase %lld: %.6f s/sweep, remap %s, owned:", (long long)phase, worst, remapped ? "yes" : "no");
      for (unsigned long long o : owned) std::printf(" %llu", o);
      std::printf(", speeds:");
      for (double x : speeds) std::printf(" %.3g", x);
      std::printf("\n");
    }
  }

  std::vector<Record> result(rank == 0 ? n : 0);
  CHECK(nuce_graph_gather(g, loc.slots.data(), loc.owned + loc.ghosts, result.data(), result.size()));
  int ok = 1;
  if (rank == 0) {
    std::vector<double> s = serial(mesh, phases * sweeps);
    int64_t differ = 0;
    for (int64_t v = 0; v < n; v++)
      if (result[v].gid != v || std::memcmp(&result[v].u, &s[v], sizeof(double)) != 0) differ++;
    ok = differ == 0;
    std::printf("mesh_graph: nuce %s, %d ranks, %lld phases of %lld sweeps\n", nuce_version(), size,
                (long long)phases, (long long)sweeps);
    std::printf("mesh_graph: remaps: %d\n", remaps);
    std::printf("mesh_graph: owned:");
    for (unsigned long long o : owned) std::printf(" %llu", o);
    std::printf("\n");
    if (ok)
      std::printf("mesh_graph: serial check: identical\n");
    else
      std::printf("mesh_graph: serial check: FAILED (%lld vertices differ)\n", (long long)differ);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(nuce_graph_free(g));
  CHECK(nuce_balancer_free(b));
  MPI_Finalize();
  return ok ? 0 : 1;
}
