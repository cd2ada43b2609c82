"""Inventory of seed 002 (on initialization, parametrization and normalization of Transformers).

Equations are numbered (1)–(17) in order, as the article's page numbers them; prose claims are
"claim 1" … in order. The article has no annotated section; its SELU code block is empty."""
from deepnotes.ledger.items import Item

INIT, PP = "initialization", "post_vs_pre_norm"
SCALE_ONLY = "a result of large-model training reported by other papers; the book's toy runs cannot test it"

ITEMS = (
    # ---- opening ---------------------------------------------------------------------------------
    Item("claim 1", "main", "", "qualitative",
         "Forgetting the 1/√d after QKᵀ stopped a Transformer from converging; T5 omits it yet converges "
         "because its initialization compensates", INIT),
    # ---- §采样分布 --------------------------------------------------------------------------------
    Item("claim 2", "main", "采样分布", "equation",
         "U[μ − √3σ, μ + √3σ] has mean μ and variance σ² (U[a, b]: mean (a+b)/2, variance (b−a)²/12)", INIT),
    Item("claim 3", "main", "采样分布", "definition",
         "A truncated normal resamples N(μ, σ²) until the draw falls inside [a, b]", INIT,
         if_unchecked="defines the truncated normal by its sampling procedure"),
    Item("claim 4", "main", "采样分布", "qualitative", "tf.random.truncated_normal hard-codes a = μ − 2σ, b = μ + 2σ", INIT),
    Item("eq. (1)", "main", "采样分布", "numeric",
         "Cut at ±2σ, the mean stays μ and the variance becomes γσ², γ = ∫x²e^{−x²/2}/∫e^{−x²/2} over [−2, 2] = 0.7737413…", INIT),
    Item("claim 5", "main", "采样分布", "numeric", "To get variance σ², pass σ/√γ = 1.1368472…σ", INIT),
    # ---- §稳定二阶矩 ------------------------------------------------------------------------------
    Item("claim 6", "main", "稳定二阶矩", "qualitative",
         "Zero mean and unit variance are unnecessary; the second (raw) moment suffices to detect vanishing "
         "or explosion, and it also works for non-negative activations", INIT,
         if_unchecked="a choice of measure, argued rather than claimed as a fact"),
    Item("eq. (2)", "main", "稳定二阶矩", "definition", "Dense layer without activation: y_j = b_j + Σ_i x_i w_ij (m inputs, n outputs)", INIT,
         if_unchecked="defines the layer"),
    Item("eq. (3)", "main", "稳定二阶矩", "equation",
         "E[y_j²] = Σ_{i1,i2} E[x_i1 x_i2] E[w_i1j w_i2j] (zero bias, independent weights)", INIT),
    Item("eq. (4)", "main", "稳定二阶矩", "equation", "With zero-mean i.i.d. weights and E[x²] = 1: E[y_j²] = m E[w²]", INIT),
    Item("claim 7", "main", "稳定二阶矩", "equation",
         "LeCun init: E[w²] = 1/m keeps the second moment, whatever the input's mean", INIT),
    # ---- §激活函数 --------------------------------------------------------------------------------
    Item("eq. (5)", "main", "激活函数", "equation", "ReLU zeroes about half: E[y²] = (m/2)E[w²], so He init uses 2/m", INIT),
    Item("claim 8", "main", "激活函数", "qualitative",
         "With tanh or sigmoid no initialization keeps the second moment at 1", INIT),
    Item("eq. (6)", "main", "激活函数", "numeric", "E[sigmoid(x)²] for x ~ N(0, 1) is 0.2933790…", INIT),
    Item("claim 9", "main", "激活函数", "qualitative",
         "sigmoid(x)/√0.293379 keeps the second moment roughly unchanged (the 'tweaked' activation)", INIT),
    Item("eq. (7)", "main", "激活函数", "numeric",
         "SELU, λ = 1.0507…, α = 1.6732…, gives zero mean and unit variance for a standard normal input", INIT),
    Item("claim 10", "main", "激活函数", "qualitative",
         "SELU is at most a good initialization (a tweaked ELU), not self-normalization", INIT,
         not_checked="an opinion about the SELU paper; the book checks SELU's constants (eq. (7)) and its "
                     "second moment through depth, not whether it 'normalizes itself' during training"),
    # ---- §直接标准化 ------------------------------------------------------------------------------
    Item("eq. (8)", "main", "直接标准化", "definition", "LayerNorm over the last axis, with γ_k, β_k", INIT,
         if_unchecked="defines LayerNorm"),
    Item("eq. (9)", "main", "直接标准化", "definition", "RMSNorm: no centring, σ² = mean(x²)", INIT,
         if_unchecked="defines RMSNorm"),
    Item("claim 11", "main", "直接标准化", "qualitative",
         "RMSNorm is faster than LayerNorm and works about as well; T5 uses it; it may replace LayerNorm", INIT),
    Item("claim 12", "main", "直接标准化", "qualitative",
         "Centring may hurt (StyleGAN2's droplets); it stores a prior like a bias, so T5 drops biases too", INIT,
         not_checked="a conjecture the article labels as such; " + SCALE_ONLY),
    # ---- §NTK参数化 -------------------------------------------------------------------------------
    Item("eq. (10)", "main", "NTK参数化", "equation", "NTK parametrization: y_j = b_j + (1/√m)Σ_i x_i w_ij with w ~ N(0, 1) keeps the second moment", INIT),
    Item("claim 13", "main", "NTK参数化", "scaling",
         "Under NTK parametrization every weight is O(1), so Adam at lr 10⁻² changes each by about 1 % per step", INIT),
    Item("eq. (11)", "main", "NTK参数化", "equation", "q, k with unit-variance entries: E[(q·k)²] = d", INIT),
    Item("claim 14", "main", "NTK参数化", "numeric", "Scores then fall within about ±3√d", INIT),
    Item("claim 15", "main", "NTK参数化", "qualitative",
         "With d ≥ 64 the softmax is then nearly one-hot and its gradient vanishes", INIT),
    Item("claim 16", "main", "NTK参数化", "equation",
         "Two fixes give unit score variance: divide by √d (BERT), or divide q, k's init variance by √d (T5)", INIT),
    # ---- §残差连接 --------------------------------------------------------------------------------
    Item("claim 17", "main", "残差连接", "equation",
         "Independent x and F(x) with variances σ₁², σ₂²: x + F(x) has variance σ₁² + σ₂²", PP),
    Item("eq. (12)", "main", "残差连接", "definition", "Post Norm: x_{t+1} = Norm(x_t + F_t(x_t))", PP,
         if_unchecked="defines Post Norm"),
    Item("claim 18", "main", "残差连接", "qualitative",
         "Post Norm weakens the identity branch, so it needs warmup and a small learning rate to converge", PP),
    Item("eq. (13)", "main", "残差连接", "equation", "At init (both variances 1) Post Norm acts as x_{t+1} = (x_t + F_t(x_t))/√2", PP),
    Item("eq. (14)", "main", "残差连接", "equation",
         "Unrolled: x_l = x_0/2^{l/2} + Σ_k F_k/2^{(l−k)/2}: the earlier the path, the smaller its weight", PP),
    Item("eq. (15)", "main", "残差连接", "definition", "Pre Norm: x_{t+1} = x_t + F_t(Norm(x_t))", PP,
         if_unchecked="defines Pre Norm"),
    Item("eq. (16)", "main", "残差连接", "equation",
         "Unrolled: x_l = x_0 + F_0(x_0) + F_1(x_1/√2) + ⋯ + F_{l−1}(x_{l−1}/√l): every path has equal weight", PP),
    Item("claim 19", "main", "残差连接", "qualitative",
         "Every Pre Norm path has equal weight, so its residual works better and it is easier to optimize", PP),
    Item("claim 20", "main", "残差连接", "qualitative",
         "Pre Norm's x_l has a large variance, so it needs a Norm before the prediction head", PP),
    Item("claim 21", "main", "残差连接", "qualitative", "Neither Post Norm nor Pre Norm is the identity at initialization", PP),
    Item("eq. (17)", "main", "残差连接", "equation",
         "x_{t+1} = x_t + α_t F_t(x_t) with α_t = 0 at init is exactly the identity (SkipInit, ReZero)", PP),
    Item("claim 22", "main", "残差连接", "qualitative",
         "SkipInit and ReZero can replace the Norm in the residual; Fixup zero-initializes each branch's last layer", PP),
    Item("claim 23", "main", "残差连接", "qualitative",
         "Raising α_t at a fixed small step until it reaches 1 worked best in the author's experiments", PP),
)
