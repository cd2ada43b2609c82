"""Inventory of seed 004 (why residuals), with the readers' comments."""

from deepnotes.ledger.items import Item

ITEMS = (
    # (opening paragraphs, before the first heading)
    Item(
        "claim 1",
        "main",
        "",
        "numeric",
        "DeepNet (Microsoft) can train a 1000-layer Transformer (recap of seed 000)",
        "thousand_layers",
        "recaps the DeepNet paper's result, inventoried with seed 000",
    ),
    Item(
        "claim 2",
        "main",
        "",
        "qualitative",
        "DeepNet's two changes: a larger weight on the identity path and a smaller init of the residual branch; "
        "other works reached similar conclusions",
        "thousand_layers",
        "describes the DeepNorm recipe, inventoried with seed 000",
    ),
    # 增量爆炸
    Item(
        "claim 3",
        "main",
        "增量爆炸",
        "qualitative",
        "Residual connections are what make deep models (hundreds, thousands, even 10,000 layers) trainable",
        "why_residuals",
    ),
    Item(
        "claim 4",
        "main",
        "增量爆炸",
        "qualitative",
        "Init + normalization can keep a plain feed-forward net's "
        "gradients stable, yet deep plain nets stay hard to train: "
        "another cause exists",
        "why_residuals",
    ),
    Item(
        "eq. (1)",
        "main",
        "增量爆炸",
        "equation",
        "ΔL = L(θ+Δθ) − L(θ) ≈ ⟨∇L, Δθ⟩: to first order the loss "
        "change is the gradient's inner product with the update",
        "increment_explosion",
    ),
    Item("claim 5", "main", "增量爆炸", "equation", "For SGD, Δθ = −η∇L, so ΔL ≈ −η‖∇L‖²", "increment_explosion"),
    Item(
        "claim 6",
        "main",
        "增量爆炸",
        "scaling",
        "N layers of K parameters each (on average) with O(1) per-parameter gradients give ΔL = O(ηNK)",
        "increment_explosion",
    ),
    Item(
        "claim 7",
        "main",
        "增量爆炸",
        "qualitative",
        "The per-step update grows ∝ depth N, so deeper models "
        "more easily fall early into poor local optima and training "
        "stalls or collapses",
        "increment_explosion",
    ),
    # 治标之法
    Item(
        "claim 8",
        "main",
        "治标之法",
        "qualitative",
        "Warmup (a tiny learning rate at first, raised slowly) gets the model through the early 'danger period', after "
        "which training proceeds normally",
        "increment_explosion",
    ),
    Item(
        "claim 9",
        "main",
        "治标之法",
        "qualitative",
        "Warmup only treats the symptom: a large loss change from a small parameter change means a very non-smooth "
        "landscape; fix the model instead",
        "increment_explosion",
        not_checked=(
            "a reading of the landscape (non-smooth where small steps change the loss a lot); the increment "
            "chapter's first-order check shows where ΔL departs from ⟨∇L, Δθ⟩, but no verdict tests 'only the symptom'"
        ),
    ),
    Item(
        "claim 10",
        "main",
        "治标之法",
        "scaling",
        "To cancel the depth in ΔL ≈ −η‖∇L‖² = O(ηNK), each parameter's gradient must shrink to O(1/√N)",
        "increment_explosion",
    ),
    # 稳定传播
    Item(
        "claim 11",
        "main",
        "稳定传播",
        "qualitative",
        "Merely shrinking the gradients is easy: "
        "just lower the initialization variance (at the cost of forward stability)",
        "why_residuals",
    ),
    Item(
        "claim 12",
        "main",
        "稳定传播",
        "qualitative",
        "Forward stability, measured by the second moment, must be kept while shrinking gradients: it is a prior and a "
        "better starting point",
        "why_residuals",
        "a modelling premise (a prior the author adopts), not a result",
    ),
    Item(
        "eq. (2)",
        "main",
        "稳定传播",
        "definition",
        "A plain linear layer y = xW with x ∈ ℝⁿ, W ∈ ℝ^{n×m}",
        "initialization",
        "definition of the linear layer: nothing to check",
    ),
    Item(
        "claim 13",
        "main",
        "稳定传播",
        "numeric",
        "Zero-mean init with variance 1/n makes the second moment of y = xW equal that of x",
        "initialization",
    ),
    Item(
        "claim 14",
        "main",
        "稳定传播",
        "numeric",
        "An activation adds a constant factor: with relu the variance becomes 2/n",
        "initialization",
    ),
    Item(
        "eq. (3)",
        "main",
        "稳定传播",
        "equation",
        "∂L/∂x = (∂L/∂y)(∂y/∂x) = (∂L/∂y) Wᵀ: backpropagation through y = xW multiplies by Wᵀ",
        "initialization",
    ),
    Item(
        "claim 15",
        "main",
        "稳定传播",
        "numeric",
        "Keeping the backward second moment stable needs zero-mean init with variance 1/m",
        "initialization",
    ),
    Item(
        "claim 16",
        "main",
        "稳定传播",
        "numeric",
        "Xavier init takes the average of the two, variance 2/(n+m)",
        "initialization",
    ),
    Item(
        "claim 17",
        "main",
        "稳定传播",
        "scaling",
        "With the forward-stable variance 1/n, the backward (gradient) second moment becomes m/n times the original",
        "why_residuals",
    ),
    Item(
        "claim 18",
        "main",
        "稳定传播",
        "qualitative",
        "m and n are hyperparameters with no tie to depth, so they cannot deliver the 1/√N gradient reduction",
        "why_residuals",
    ),
    Item(
        "eq. (4)",
        "main",
        "稳定传播",
        "definition",
        "A plain (residual-free) stack φ_l(φ_{l−1}(⋯φ_1(xW_1 + b_1)⋯)W_{l−1} + b_{l−1})W_l + b_l)",
        "why_residuals",
        "definition of the plain feed-forward stack: nothing to check",
    ),
    Item(
        "claim 19",
        "main",
        "稳定传播",
        "qualitative",
        "In a plain stack, a stable forward pass fixes the backward pass, "
        "so gradients cannot depend on depth: increment "
        "explosion is unsolvable",
        "why_residuals",
    ),
    Item(
        "claim 20",
        "main",
        "稳定传播",
        "qualitative",
        "Hence deep plain feed-forward nets can at best cure "
        "vanishing/exploding gradients and are necessarily hard to train",
        "why_residuals",
    ),
    # 残差初现
    Item(
        "eq. (5)",
        "main",
        "残差初现",
        "definition",
        "The scaled residual block y = x + ε f(x; θ) (input and output of equal dimension)",
        "why_residuals",
        "definition of the scaled residual block: nothing to check",
    ),
    Item(
        "claim 21",
        "main",
        "残差初现",
        "qualitative",
        "For ε small enough the forward pass of y = x + εf(x; θ) is stable",
        "why_residuals",
    ),
    Item(
        "eq. (6)",
        "main",
        "残差初现",
        "equation",
        "∂y/∂x = I + ε ∂f(x; θ)/∂x: the block's Jacobian is the identity plus ε times the branch's",
        "why_residuals",
    ),
    Item(
        "claim 22",
        "main",
        "残差初现",
        "qualitative",
        "By eq. (6), for ε small enough the backward pass is stable as well",
        "why_residuals",
    ),
    Item(
        "eq. (7)",
        "main",
        "残差初现",
        "equation",
        "∂L/∂θ = (∂L/∂y)(∂y/∂θ) = ε (∂L/∂y)(∂f/∂θ): the parameter gradient carries the factor ε",
        "why_residuals",
    ),
    Item(
        "claim 23",
        "main",
        "残差初现",
        "scaling",
        "ε gives depth-dependent gradient scaling: ε = 1/√N scales the parameter gradients by 1/√N",
        "why_residuals",
    ),
    Item(
        "claim 24",
        "main",
        "残差初现",
        "qualitative",
        "Answer (set apart as a quote): residuals stabilise forward and backward passes and scale parameter gradients "
        "against increment explosion",
        "why_residuals",
    ),
    # 足够的小
    Item(
        "claim 25",
        "main",
        "足够的小",
        "scaling",
        "1-D model: ∂y/∂x = 1 + ε∂f/∂x ≈ 1 + ε with ∂f/∂x = O(1), so the 'expansion factor' over N layers is ≈ (1+ε)^N",
        "why_residuals",
    ),
    Item("eq. (8)", "main", "足够的小", "numeric", "(1 + 1/N)^N < lim_{N→∞} (1 + 1/N)^N = e", "why_residuals"),
    Item(
        "claim 26",
        "main",
        "足够的小",
        "scaling",
        "In 1-D, keeping the backward pass from exploding with depth needs ε = O(1/N) ('at least', as printed); "
        "ε = 1/√N is not enough",
        "why_residuals",
    ),
    Item(
        "eq. (9)",
        "main",
        "足够的小",
        "equation",
        "v ∂y/∂x = v + ε v ∂f(x; θ)/∂x: eq. (6) multiplied on the left by an arbitrary vector v",
        "why_residuals",
    ),
    Item(
        "claim 27",
        "main",
        "足够的小",
        "qualitative",
        "At init ∂f/∂x is like a zero-mean random matrix, "
        "close to a multiple of an orthogonal one, so v and εv∂f/∂x are "
        "nearly orthogonal",
        "why_residuals",
    ),
    Item(
        "eq. (10)",
        "main",
        "足够的小",
        "scaling",
        "‖v ∂y/∂x‖² = O((1 + ε²)‖v‖²): in high dimension a residual block expands squared norms by about 1 + ε²",
        "why_residuals",
    ),
    Item(
        "claim 28",
        "main",
        "足够的小",
        "scaling",
        "High-dim per-layer expansion ≈ 1 + ε² rather than 1 + ε, "
        "so ε² = O(1/N) suffices and ε = 1/√N is basically enough",
        "why_residuals",
    ),
    # 文章小结
    Item(
        "claim 29",
        "main",
        "文章小结",
        "qualitative",
        "Residuals stabilise forward and backward passes and solve "
        "increment explosion at once; plain nets cannot, so they "
        "are hard to deepen",
        "why_residuals",
        "the source's own summary of claims 19-20 and 24",
    ),
    # readers' comments
    Item(
        "comment 1",
        "comment",
        "comments",
        "qualitative",
        "Su's reply to alann, 2022-03-21: with αε = 1 (α > ε > 0) fixed and a Norm after (Post-Norm), αx + f(x) and "
        "x + εf(x) are fully equivalent",
        "why_residuals",
    ),
    Item(
        "comment 2",
        "comment",
        "comments",
        "qualitative",
        "Su's reply to alann, 2022-03-21: with α or ε fixed and no Norm after, x + εf(x) diverges less easily than "
        "αx + f(x), more reasonable",
        "why_residuals",
    ),
    Item(
        "comment 3",
        "comment",
        "comments",
        "qualitative",
        "Su's reply to alann, 2022-03-21: if α or ε is trainable, at one learning rate ε learns relatively faster, "
        "since α > ε",
        "why_residuals",
    ),
    Item(
        "comment 4",
        "comment",
        "comments",
        "numeric",
        "阅读使我快乐, 2022-03-21: with ε = 1/√N the 'expansion "
        "factor' (1+ε)^N of eq. (8) tends to e², so why would it "
        "explode?",
        "why_residuals",
    ),
    Item(
        "comment 5",
        "comment",
        "comments",
        "scaling",
        "Su's reply to 阅读使我快乐, 2022-03-21: "
        "(1 + 1/√N)^N = [(1 + 1/√N)^{√N}]^{√N} ≈ e^{√N}, which grows without bound",
        "why_residuals",
    ),
    Item(
        "comment 6",
        "comment",
        "comments",
        "numeric",
        "王珣, 2022-03-21: the limit of (1 + 1/√N)^N is not e²",
        "why_residuals",
    ),
    Item(
        "comment 7",
        "comment",
        "comments",
        "scaling",
        "于锡祥, 2022-04-06: e² would need the exponent 2√N; with exponent N Su's derivation (≈ e^{√N}) is right",
        "why_residuals",
    ),
    Item(
        "comment 8",
        "comment",
        "comments",
        "qualitative",
        "Su's reply to Dreamer312, 2022-05-16: eq. (9)→(10) treats v∂f/∂x as a vector of norm ‖v‖ orthogonal to v",
        "why_residuals",
    ),
    Item(
        "comment 9",
        "comment",
        "comments",
        "qualitative",
        "Dreamer312, 2022-05-16: asks if an orthogonal W makes f = Wx orthogonal to x, and so v∂f/∂x orthogonal to v "
        "(a question, as printed)",
        "why_residuals",
    ),
    Item(
        "comment 10",
        "comment",
        "comments",
        "qualitative",
        "Su's reply to Dreamer312, 2022-05-16: at init ∂f/∂x is a random (near-orthogonal) matrix, so v∂f/∂x is nearly "
        "orthogonal to v",
        "why_residuals",
    ),
    Item(
        "comment 11",
        "comment",
        "comments",
        "qualitative",
        "Su's reply to Kk, 2022-06-30: the original ResNet (ε = 1, depth-independent init) does not avoid increment "
        "explosion; very deep ones fail",
        "why_residuals",
    ),
    Item(
        "comment 12",
        "comment",
        "comments",
        "qualitative",
        "one, 2022-10-30: the DeepNet paper ran 1000 layers only for encoder-decoder translation, not encoder- or "
        "decoder-only models",
        "why_residuals",
        not_checked=(
            "a remark about which models the DeepNet paper trained at 1000 layers; "
            "the book's last chapter trains decoder-only stacks, but no verdict is about the paper's scope"
        ),
    ),
    Item(
        "comment 13",
        "comment",
        "comments",
        "qualitative",
        "gzy, 2022-11-10: asks if scaling the residual branch by "
        "a small value is LayerScale (a question; Su does not know "
        "the term)",
        "why_residuals",
        not_checked="a question (is this LayerScale?), not a claim; the BERT chapter discusses Layer Scale",
    ),
    Item(
        "comment 14",
        "comment",
        "comments",
        "qualitative",
        "johnyan, 2023-11-29: without residual scaling, "
        "increment explosion inflates the last LayerNorms' input variance, "
        "gradients vanish, training stops",
        "why_residuals",
        not_checked=(
            "a mechanism proposed by a reader about the last LayerNorms' "
            "input variance in long training; the book does not track it"
        ),
    ),
    Item(
        "comment 15",
        "comment",
        "comments",
        "qualitative",
        "johnyan, 2023-11-29: once residual scaling and warmup "
        "have lowered loss and gradient norm, dropping the residual "
        "scaling is harmless",
        "why_residuals",
        not_checked=(
            "a reader's report that the residual scaling can be dropped "
            "later in training; the book does not run such a schedule"
        ),
    ),
)
