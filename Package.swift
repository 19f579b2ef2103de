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
    .target(name: "CVipsShim"),
    // The worker processes' sandbox: seccomp through libseccomp (Debian's libseccomp-dev).
    .target(name: "CSandbox", linkerSettings: [.linkedLibrary("seccomp")]),
    .target(
      name: "Darkroom",
      dependencies: [
        "CVipsShim", "CExif", "CSandbox", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "GRDB", package: "GRDB.swift"),
      ]),
    .executableTarget(
      name: "DarkroomCLI",
      dependencies: [
        "Darkroom",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    // Benchmarks/edit.sh: an edit through the Swift API, without a library or store.
    .executableTarget(
      name: "DarkroomBench", dependencies: ["Darkroom"], path: "Benchmarks/DarkroomBench"),
    // Depends on the CLI so that `swift test` builds the binary the CLI tests run.
    .testTarget(
      name: "DarkroomTests", dependencies: ["Darkroom", "DarkroomCLI", "CSandbox"]),
  ],
  swiftLanguageModes: [.v6]
)
