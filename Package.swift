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
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
  ],
  targets: [
    // libvips and libexif, found through pkg-config. Only Sources/Darkroom/Vips and
    // Sources/Darkroom/Exif import these modules.
    .systemLibrary(
      name: "CVips", pkgConfig: "vips",
      providers: [.apt(["libvips-dev"]), .brew(["vips"])]),
    .systemLibrary(
      name: "CExif", pkgConfig: "libexif",
      providers: [.apt(["libexif-dev"]), .brew(["libexif"])]),
    // Fixed-argument wrappers around libvips' variadic calls, which Swift cannot make.
    .target(name: "CVipsShim", dependencies: ["CVips"]),
    .target(
      name: "Darkroom",
      dependencies: [
        "CVips", "CVipsShim", "CExif", .product(name: "Crypto", package: "swift-crypto"),
      ]),
    .executableTarget(
      name: "DarkroomCLI",
      dependencies: [
        "Darkroom",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    // Depends on the CLI so that `swift test` builds the binary the CLI tests run.
    .testTarget(name: "DarkroomTests", dependencies: ["Darkroom", "DarkroomCLI"]),
  ],
  swiftLanguageModes: [.v6]
)
