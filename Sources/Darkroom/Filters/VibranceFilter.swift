/// Vibrance: colour intensity raised where it is low, in Oklab, leaving colours that are
/// already vivid (and greys, which have none) nearly as they are.
enum VibranceFilter: FilterDefinition {
  static let name = "vibrance"
  static let summary = "muted colours more vivid (+) or quieter (-), vivid ones kept"
  static let space = FilterSpace.oklab
  static let since = 2
  static let parameters = [
    FilterParameter(
      "amount", .number(-1...1), default: .number(0.3),
      "how much; a muted colour's chroma changes by up to this fraction")
  ]

  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]? {
    let amount = arguments.number("amount") ?? 0
    if amount == 0 { return [] }
    return [.develop([DevelopStage(kind: .vibrance, numbers: [amount])])]
  }

}
