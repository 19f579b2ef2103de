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
  ],
  targets: [
    // libexif, found through pkg-config; only Sources/Darkroom/Exif imports it. libvips is
    // not linked: CVipsShim loads it on first use (see its header), and only the tests
    // compile against its headers, to check Darkroom's declarations of its functions.
    .systemLibrary(
      name: "CVips", pkgConfig: "vips",
      providers: [.apt(["libvips-dev"]), .brew(["vips"])]),
    .systemLibrary(
      name: "CExif", pkgConfig: "libexif",
      providers: [.apt(["libexif-dev"]), .brew(["libexif"])]),
    .target(name: "CVipsShim"),
    .target(name: "CVipsShimCheck", dependencies: ["CVips"], path: "Tests/CVipsShimCheck"),
    .target(
      name: "Darkroom",
      dependencies: [
        "CVipsShim", "CExif", .product(name: "Crypto", package: "swift-crypto"),
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
      name: "DarkroomTests", dependencies: ["Darkroom", "DarkroomCLI", "CVipsShimCheck"]),
  ],
  swiftLanguageModes: [.v6]
)
