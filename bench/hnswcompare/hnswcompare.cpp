// hnswcompare builds an hnswlib index (L2) of the vectors in a file and
// answers the queries of another, single-threaded, for searchcompare's
// vector workloads (bench/cmd/searchcompare/vector.go), which writes the
// files, runs this in a process of its own and compares the answers.
//
//   hnswcompare DATA QUERIES RESULTS M EF_CONSTRUCTION EF_SEARCH[,EF_SEARCH...] K
//
// DATA and QUERIES: n:u32 dims:u32 then n*dims float32, little-endian.
// Several efSearch values: one build, the queries run at each in turn.
// RESULTS: for each efSearch in order, the k labels (u32) of each
// query's hits, nearest first.
// It prints one line: build_seconds mem_bytes then each query's
// microseconds, efSearch by efSearch.
#include <hnswlib/hnswlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static std::vector<float> readVectors(const char *path, uint32_t &n, uint32_t &dims) {
    std::ifstream in(path, std::ios::binary);
    if (!in) { std::fprintf(stderr, "hnswcompare: cannot open %s\n", path); std::exit(1); }
    in.read(reinterpret_cast<char *>(&n), 4);
    in.read(reinterpret_cast<char *>(&dims), 4);
    std::vector<float> v(size_t(n) * dims);
    in.read(reinterpret_cast<char *>(v.data()), v.size() * 4);
    if (!in) { std::fprintf(stderr, "hnswcompare: %s is short\n", path); std::exit(1); }
    return v;
}

// residentBytes is the process's resident set, from /proc/self/statm.
static long residentBytes() {
    long pages = 0, resident = 0;
    FILE *f = std::fopen("/proc/self/statm", "r");
    if (f) { if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0; std::fclose(f); }
    return resident * 4096;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        std::fprintf(stderr, "usage: hnswcompare DATA QUERIES RESULTS M EF_CONSTRUCTION EF_SEARCH[,EF_SEARCH...] K\n");
        return 2;
    }
    uint32_t n, dims, nq, qdims;
    std::vector<float> data = readVectors(argv[1], n, dims);
    std::vector<float> queries = readVectors(argv[2], nq, qdims);
    size_t M = std::atoi(argv[4]), efc = std::atoi(argv[5]), k = std::atoi(argv[7]);
    if (qdims != dims) { std::fprintf(stderr, "hnswcompare: dimensions differ\n"); return 1; }
    std::vector<size_t> efs;
    std::stringstream list(argv[6]);
    for (std::string e; std::getline(list, e, ',');) {
        int ef = std::atoi(e.c_str());
        if (ef < 1) { std::fprintf(stderr, "hnswcompare: efSearch %s\n", e.c_str()); return 2; }
        efs.push_back(size_t(ef));
    }
    if (efs.empty()) { std::fprintf(stderr, "hnswcompare: no efSearch\n"); return 2; }

    hnswlib::L2Space space(dims);
    long before = residentBytes();
    auto start = std::chrono::steady_clock::now();
    auto *index = new hnswlib::HierarchicalNSW<float>(&space, n, M, efc, 100);
    for (uint32_t i = 0; i < n; i++) index->addPoint(&data[size_t(i) * dims], i);
    double build = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    long mem = residentBytes() - before;

    std::vector<uint32_t> results(efs.size() * nq * k);
    std::vector<double> micros(efs.size() * nq);
    for (size_t e = 0; e < efs.size(); e++) {
        index->setEf(efs[e]);
        for (uint32_t q = 0; q < nq; q++) {
            size_t at = e * nq + q;
            auto t0 = std::chrono::steady_clock::now();
            auto res = index->searchKnn(&queries[size_t(q) * dims], k);
            micros[at] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
            for (size_t i = res.size(); i > 0; i--) {  // the queue pops the farthest first
                results[at * k + i - 1] = uint32_t(res.top().second);
                res.pop();
            }
        }
    }
    std::ofstream out(argv[3], std::ios::binary);
    out.write(reinterpret_cast<const char *>(results.data()), results.size() * 4);
    std::printf("%.6f %ld", build, mem);
    for (double m : micros) std::printf(" %.3f", m);
    std::printf("\n");
    delete index;
    return 0;
}
