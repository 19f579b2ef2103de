// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "Darkroom",
  products: [
    .library(name: "Darkroom", targets: ["Darkroom"]),
    .executable(name: "darkroom", targets: ["DarkroomCLI"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    // The library's catalog: SQLite (Debian's libsqlite3-dev) through GRDB.
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    // `darkroom serve`: HTTP (Hummingbird 2), graceful stop (service-lifecycle), request logs
    // (swift-log), the gallery's templates (swift-mustache) and /metrics (swift-prometheus).
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
    .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
    .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.0"),
    // Only for `swift package generate-documentation`: a plugin, not linked into anything.
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
  ],
  targets: [
    // libexif, found through pkg-config; only Sources/Darkroom/Exif imports it. libvips is
    // not linked: CVipsShim loads it on first use (see its header); a test compiles
    // Tests/ShimCheck/check.c against its headers, to check Darkroom's declarations.
    .systemLibrary(
      name: "CExif", pkgConfig: "libexif",
      providers: [.apt(["libexif-dev"]), .brew(["libexif"])]),
    // libsodium (Debian's libsodium-dev): Argon2id and XChaCha20-Poly1305 for encrypted
    // spaces; only Sources/Darkroom/Spaces/Sodium.swift imports it.
    .systemLibrary(
      name: "CSodium", pkgConfig: "libsodium",
      providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]),
    // libpq (Debian's libpq-dev): PostgreSQL's own client, for a catalog kept in PostgreSQL;
    // only Sources/Darkroom/Catalog/Postgres/PostgresConnection.swift imports it.
    .systemLibrary(
      name: "CPostgres", pkgConfig: "libpq",
      providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
    .target(name: "CVipsShim", linkerSettings: [.linkedLibrary("m")]),
    // The comparisons of near-duplicate grouping (Library/Duplicates.swift), in C for the
    // processor's POPCNT instruction.
    .target(name: "CHamming"),
    // A video's poster frame through FFmpeg (Debian's libavformat-dev, libavcodec-dev and
    // libswscale-dev for the headers), loaded with dlopen on first use as libvips is.
    .target(name: "CVideo", linkerSettings: [.linkedLibrary("m")]),
    // Camera RAW files through LibRaw (Debian's libraw-dev for the header), loaded with dlopen
    // on first use, in sandboxed workers only.
    .target(name: "CRaw"),
    // zlib's inflate (Debian's zlib1g-dev), for darktable's compressed module params.
    .target(name: "CInflate", linkerSettings: [.linkedLibrary("z")]),
    // The worker processes' sandbox: seccomp through libseccomp (Debian's libseccomp-dev).
    .target(name: "CSandbox", linkerSettings: [.linkedLibrary("seccomp")]),
    .target(
      name: "Darkroom",
      dependencies: [
        .product(name: "Logging", package: "swift-log"),
        "CVipsShim", "CExif", "CSandbox", "CSodium", "CHamming", "CVideo", "CRaw",
        "CPostgres", "CInflate",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "GRDB", package: "GRDB.swift"),
      ]),
    // The library over HTTP: routes, auth, templates and SSE over `Library`; no orchestration.
    .target(
      name: "DarkroomServer",
      dependencies: [
        "Darkroom",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Mustache", package: "swift-mustache"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
      ]),
    .executableTarget(
      name: "DarkroomCLI",
      dependencies: [
        "Darkroom", "DarkroomServer",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    // Benchmarks/edit.sh: an edit through the Swift API, without a library or store.
    .executableTarget(
      name: "DarkroomBench", dependencies: ["Darkroom"], path: "Benchmarks/DarkroomBench"),
    // PhotoKit's tour on the public API (Examples/Tour/main.swift): a test type-checks it
    // from outside the package, where only `public` declarations are seen, and runs it.
    .executableTarget(name: "DarkroomTour", dependencies: ["Darkroom"], path: "Examples/Tour"),
    // How many tests run at once (Tests/CTestPlan/test_plan.c says why), set as the test
    // executable loads.
    .target(name: "CTestPlan", path: "Tests/CTestPlan"),
    // Depends on the CLI so that `swift test` builds the binary the CLI tests run.
    .testTarget(
      name: "DarkroomTests",
      dependencies: [
        "Darkroom", "DarkroomCLI", "CSandbox", "DarkroomServer", "DarkroomTour", "CTestPlan",
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        // SignedRenditionTests works out the documented HMAC itself, not through the engine.
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      // LayerTests reads the kept list of public types from the source tree.
      exclude: ["PublicTypes.txt"]),
  ],
  swiftLanguageModes: [.v6]
)
