"""Inventory of seed 003: annotated §6–§11."""

from deepnotes.ledger.items import Item

ITEMS = (
    # ---- 6. 梯度流与信号传播分析 ----
    # 6.1 前向信号传播
    Item(
        "eq. (47)",
        "annotated",
        "6.1",
        "definition",
        "Signal strength of layer ℓ: S_ℓ = Var[x_ℓ]",
        "post_vs_pre_norm",
        "definition of the signal strength S_ℓ: nothing to check",
    ),
    Item(
        "eq. (48)",
        "annotated",
        "6.1",
        "equation",
        "Post-LN forward variance: S_{ℓ+1} = (S_ℓ + σ²)/(1 + σ²) ≈ 1, since LayerNorm keeps the variance at 1",
        "post_vs_pre_norm",
    ),
    Item(
        "eq. (49)",
        "annotated",
        "6.1",
        "equation",
        "Pre-LN forward variance: S_{ℓ+1} = S_ℓ + σ², i.e. the variance accumulates (grows) with depth",
        "post_vs_pre_norm",
    ),
    # 6.2 反向梯度传播
    Item(
        "eq. (50)",
        "annotated",
        "6.2",
        "definition",
        "Gradient signal strength: G_ℓ = Var[∂L/∂x_ℓ]",
        "post_vs_pre_norm",
        "definition of the gradient strength G_ℓ: nothing to check",
    ),
    Item(
        "eq. (51)",
        "annotated",
        "6.2",
        "equation",
        "Chain rule for Post-LN: ∂L/∂x_ℓ = ∂L/∂x_{ℓ+1} · ∂x_{ℓ+1}/∂x_ℓ",
        "post_vs_pre_norm",
        "the chain rule, a standard identity; the source's claims are eqs. (52)-(54)",
    ),
    Item(
        "eq. (52)",
        "annotated",
        "6.2",
        "equation",
        "Post-LN layer Jacobian: ∂x_{ℓ+1}/∂x_ℓ = (I + ∂F_ℓ/∂x_ℓ)/√(1+σ²)",
        "post_vs_pre_norm",
        not_checked=(
            "the Post-LN Jacobian with the LayerNorm's own projection (removing the mean and the normalized "
            "direction) dropped; the book computes no layer Jacobian, but measures the per-block gradients it is "
            "meant to predict against eqs. (42), (54) (BERT chapter, the annotated tables measured)"
        ),
    ),
    Item(
        "eq. (53)",
        "annotated",
        "6.2",
        "equation",
        "Residual-path contribution: ‖∂x_{ℓ+1}/∂x_ℓ‖ ≈ 1/√(1+σ²)",
        "post_vs_pre_norm",
        not_checked=(
            "the I term of eq. (52) alone; no verdict checks it by itself; the BERT chapter measures the "
            "per-block gradients it is meant to give ({{Post-LN gradients fall toward the input like the identity "
            "path}}), where the ∂F/∂x term it leaves out also carries gradient"
        ),
    ),
    Item(
        "eq. (54)",
        "annotated",
        "6.2",
        "scaling",
        "Recursing, Post-LN gradient strength decays with distance from the top: G_ℓ ≈ G_L/(1+σ²)^{L−ℓ}",
        "post_vs_pre_norm",
    ),
    # 6.3 有效深度（Effective Depth）
    Item(
        "eq. (55)",
        "annotated",
        "6.3",
        "definition",
        "Effective depth: the depth where the gradient has decayed by e, (1+σ²)^{L_eff} = e ⇒ L_eff = 1/log(1+σ²)",
        "bert_init",
        "definition of the effective depth L_eff; solving for it is immediate",
    ),
    Item(
        "eq. (56)",
        "annotated",
        "6.3",
        "scaling",
        "For σ² ≪ 1, L_eff ≈ 1/σ²",
        "bert_init",
        if_unchecked="log(1 + σ²) ≈ σ² to first order in eq. (55)",
    ),
    Item("eq. (57)", "annotated", "6.3", "numeric", "For σ = 0.0361: L_eff ≈ 1/0.0013 ≈ 769 layers", "bert_init"),
    Item("eq. (58)", "annotated", "6.3", "numeric", "For σ = 0.0176: L_eff ≈ 1/0.00031 ≈ 3226 layers", "bert_init"),
    Item(
        "claim §6.3.1",
        "annotated",
        "6.3",
        "qualitative",
        "Conclusion: a smaller initialization markedly increases the effective depth",
        "bert_init",
        "the source's own summary of eqs. (56)-(58)",
    ),
    # ---- 7. Layer Scale与初始化的关系 ----
    # 7.1 Layer Scale机制
    Item(
        "eq. (59)",
        "annotated",
        "7.1",
        "definition",
        "Layer Scale: x_{ℓ+1} = x_ℓ + λ_ℓ ⊙ F_ℓ(x_ℓ), a learnable per-channel scale on the residual branch",
        "initialization",
        "definition of Layer Scale: nothing to check",
    ),
    Item(
        "claim §7.1.1",
        "annotated",
        "7.1",
        "numeric",
        "Layer Scale's λ_ℓ is initialized to a small value such as 10⁻⁴ or 10⁻⁶",
        "initialization",
        not_checked=(
            "a description of how Layer Scale is usually initialized (CaiT uses 0.1 down to 10⁻⁶ depending on "
            "depth), nothing to compute; the book builds no Layer Scale model"
        ),
    ),
    Item(
        "eq. (60)",
        "annotated",
        "7.1",
        "equation",
        "Layer Scale acts like a smaller init: Var[λ_ℓ ⊙ F_ℓ(x_ℓ)] = λ²σ²",
        "initialization",
        if_unchecked="Var[λX] = λ² Var[X] for a fixed scale λ",
    ),
    Item(
        "eq. (61)",
        "annotated",
        "7.1",
        "numeric",
        "With λ = 10⁻⁴ and σ = 0.02 the effective init std is σ_eff = λσ = 2 × 10⁻⁶",
        "initialization",
    ),
    # 7.2 深度可扩展性
    Item(
        "eq. (62)",
        "annotated",
        "7.2",
        "scaling",
        "With Layer Scale the effective depth becomes L_eff ≈ 1/(λ²σ²)",
        "initialization",
        if_unchecked="eq. (56) with eq. (60)'s λ²σ² in place of σ²; its value, eq. (63), is checked",
    ),
    Item(
        "eq. (63)",
        "annotated",
        "7.2",
        "numeric",
        "For λ = 10⁻⁴, σ = 0.02: L_eff ≈ 1/((10⁻⁴)² × 0.02²) = 1/(4 × 10⁻¹²) = 2.5 × 10¹¹ layers",
        "initialization",
    ),
    Item(
        "claim §7.2.1",
        "annotated",
        "7.2",
        "qualitative",
        "With its tiny initial scale, Layer Scale makes a deep model start out almost as the identity function",
        "initialization",
        not_checked=(
            "the book builds no Layer Scale model; the nearest measured case is ReZero, whose gates start at 0 "
            "({{ReZero starts as the identity}})"
        ),
    ),
    # ---- 8. MLM Dense层的数学解释 ----
    # 8.1 Logits的数值范围
    Item(
        "eq. (64)",
        "annotated",
        "8.1",
        "equation",
        "After LayerNorm the encoder output h ∈ ℝ^d has ‖h‖² ≈ d (each component has variance ≈ 1)",
        "bert_init",
        if_unchecked=(
            "a LayerNorm with γ = 1, β = 0 outputs zero mean and unit variance over the d features, so ‖h‖² = d "
            "by construction (up to ε); Post-Norm vs Pre-Norm measures it ('every LayerNorm output has ‖x_l‖² = "
            "d')"
        ),
    ),
    Item(
        "eq. (65)",
        "annotated",
        "8.1",
        "definition",
        "Without the extra head, logits come from the (tied) embedding matrix: logit_i = W_emb[i,:] · h",
        "bert_init",
        "definition of the tied-embedding MLM logits: nothing to check",
    ),
    Item(
        "eq. (66)",
        "annotated",
        "8.1",
        "equation",
        "At initialization E[logit_i] = 0",
        "bert_init",
        if_unchecked="zero-mean embedding rows independent of h: linearity of expectation",
    ),
    Item(
        "eq. (67)",
        "annotated",
        "8.1",
        "numeric",
        "At initialization Var[logit_i] = dσ² = 768 × 0.0176² ≈ 0.238",
        "bert_init",
    ),
    Item("eq. (68)", "annotated", "8.1", "numeric", "So the logits' standard deviation is √0.238 ≈ 0.488", "bert_init"),
    Item(
        "claim §8.1.1",
        "annotated",
        "8.1",
        "qualitative",
        "Hence the initial logits lie roughly in [−1, 1] and the softmax over the vocabulary is too uniform",
        "bert_init",
    ),
    # 8.2 添加Dense层的效果
    Item(
        "eq. (69)",
        "annotated",
        "8.2",
        "definition",
        "The MLM head adds a Dense layer and a LayerNorm: h' = Norm(W_dense h + b), W_dense ∈ ℝ^{d×d}",
        "bert_init",
        "definition of BERT's MLM transform head: nothing to check",
    ),
    Item(
        "eq. (70)",
        "annotated",
        "8.2",
        "definition",
        "The logits are then logit_i = W_emb[i,:] · h'",
        "bert_init",
        "definition of the logits after the head: nothing to check",
    ),
    Item(
        "claim §8.2.1",
        "annotated",
        "8.2",
        "qualitative",
        "Benefit 1: the gain γ of the head's LayerNorm can learn the logit scale independently",
        "bert_init",
    ),
    Item(
        "claim §8.2.2",
        "annotated",
        "8.2",
        "qualitative",
        "Benefit 2: rescaling the logits this way leaves the encoder layers' LayerNorms untouched",
        "bert_init",
    ),
    Item(
        "claim §8.2.3",
        "annotated",
        "8.2",
        "qualitative",
        "Benefit 3: the extra Dense layer adds expressive capacity",
        "bert_init",
        "an extra d×d layer adds parameters by construction: nothing to check",
    ),
    # 8.3 Gamma参数的增长
    Item(
        "claim §8.3.1",
        "annotated",
        "8.3",
        "numeric",
        "During training the gain γ of the LayerNorm after the MLM Dense layer grows to 2-5×",
        "bert_init",
    ),
    Item(
        "eq. (71)",
        "annotated",
        "8.3",
        "equation",
        "Logits factor as logit_i = γ · W̃_emb[i,:] · h̃', with h̃' normalized (variance 1) and γ > 1 an amplifier",
        "bert_init",
    ),
    Item(
        "eq. (72)",
        "annotated",
        "8.3",
        "numeric",
        "In the pretrained BERT checkpoint γ_encoder ∈ [0.8, 1.2] while γ_mlm_dense ∈ [2, 5]",
        "bert_init",
    ),
    Item(
        "claim §8.3.2",
        "annotated",
        "8.3",
        "qualitative",
        "This confirms that the MLM Dense+LN head takes on the extra job of scaling up the logits",
        "bert_init",
    ),
    # ---- 9. 数值验证与实验 ----
    # 9.1 方差传播实验
    Item(
        "claim §9.1.1",
        "annotated",
        "9.1",
        "definition",
        "Setup: 12-layer Post-LN Transformer, FFN width 768, x₀ ~ N(0, I), W ~ N(0, σ²I); Var[x_ℓ] measured per layer",
        "bert_init",
        "the experiment's setup: nothing to check",
    ),
    Item(
        "table §9.1",
        "annotated",
        "9.1",
        "table",
        "Var[x_ℓ] at layers 0/3/6/9/12 falls from 1.000 to 0.996 (σ=0.02), 0.978 (σ=0.0361), 0.948 (σ=0.05)",
        "bert_init",
    ),
    Item(
        "eq. (73)",
        "annotated",
        "9.1",
        "equation",
        "Theoretical prediction for the 12-layer Post-LN stack: Var[x_12] = 1/(1+σ²)^6",
        "bert_init",
    ),
    # 9.2 梯度范数实验
    Item(
        "table §9.2",
        "annotated",
        "9.2",
        "table",
        "‖∇_{W_ℓ}L‖ (last = 1), layers 0/3/6/9/12: σ=0.02 0.98/0.99/1.00/1.01/1.00; σ=0.0361 0.85/0.91/0.96/0.99/1.00",
        "bert_init",
    ),
    Item(
        "claim §9.2.1",
        "annotated",
        "9.2",
        "qualitative",
        "With σ = 0.02 the gradient norms are more uniform across layers and the shallow layers' gradients stronger",
        "bert_init",
    ),
    # 9.3 收敛速度对比
    Item(
        "table §9.3",
        "annotated",
        "9.3",
        "table",
        "σ only, warmup 10k: σ=0.01 converges in 120k steps (loss 2.85), "
        "0.02 100k (2.82), 0.0361 85k (2.83), 0.05 never (3.20)",
        "bert_init",
    ),
    Item(
        "claim §9.3.1",
        "annotated",
        "9.3",
        "qualitative",
        "In the §9.3 table σ = 0.05 never converges (未收敛), where 0.01–0.0361 do",
        "bert_init",
    ),
    Item(
        "eq. (74)",
        "annotated",
        "9.3",
        "numeric",
        "The optimal initialization std lies in σ ∈ [0.015, 0.025]",
        "bert_init",
    ),
    # ---- 10. 理论总结与实践建议 ----
    # 10.1 初始化标准差的选择原则
    Item(
        "eq. (75)",
        "annotated",
        "10.1",
        "scaling",
        "Rule: σ_optimal = α/√n_in, with an architecture-dependent factor α",
        "bert_init",
        not_checked=(
            "a rule of thumb whose factor α is read off table §10.1; the book's MLM sweep (Experiment 2) covers "
            "one design, Post-LN in BERT's layout, where it finds the best of four stds near 0.02, and has no "
            "Pre-LN or Layer Scale sweep to test the other factors"
        ),
    ),
    Item(
        "table §10.1",
        "annotated",
        "10.1",
        "table",
        "α by architecture: Pre-LN 1.0 (standard Xavier), "
        "shallow Post-LN 0.7, deep Post-LN 0.5 (BERT's), with LayerScale 1.0",
        "bert_init",
        not_checked=(
            "the factors are stated without data; only the Post-LN row is near anything the book measures "
            "(Experiment 2's best std of four, near 0.02), and no Pre-LN, shallow-vs-deep Post-LN or Layer Scale "
            "sweep of the init std is run"
        ),
    ),
    # 10.2 实践建议
    Item(
        "eq. (76)",
        "annotated",
        "10.2",
        "numeric",
        "Standard BERT/GPT (12-24 layers): σ = 0.02, truncated to [−2σ, 2σ]",
        "bert_init",
        not_checked=(
            "a recommendation that restates BERT's choice (main claim 28); the book's MLM sweep supports 0.02 for "
            "its own Post-LN encoder (Experiment 2) but has no 24-layer or GPT-style (Pre-LN decoder) runs"
        ),
    ),
    Item(
        "eq. (77)",
        "annotated",
        "10.2",
        "numeric",
        "Deep models (> 50 layers): σ = 0.01, or Layer Scale with λ = 10⁻⁴",
        "thousand_layers",
        not_checked=(
            "a recommendation for > 50 layers; Training 1000 layers trains DeepNorm stacks, not ones initialized "
            "at σ = 0.01 or with Layer Scale, and the book builds no Layer Scale model"
        ),
    ),
    Item(
        "eq. (78)",
        "annotated",
        "10.2",
        "scaling",
        "Pre-LN: σ = 1/√d with no extra shrinking needed",
        "bert_init",
        not_checked=(
            "no sweep of Pre-LN init stds is run; the book's Pre-LN models use its standard init, and Post-Norm "
            "vs Pre-Norm shows them training without warmup, which says nothing about which σ is best"
        ),
    ),
    Item(
        "eq. (79)",
        "annotated",
        "10.2",
        "numeric",
        "Warmup steps: T_warmup = max(1000, 0.01 × T_total)",
        "bert_init",
        not_checked=(
            "advice for pretraining of thousands to a million steps; the book's runs are a few hundred steps with "
            "warmups of tens, and no warmup length is swept"
        ),
    ),
    # 10.3 诊断工具
    Item(
        "eq. (80)",
        "annotated",
        "10.3",
        "numeric",
        "Variance check after the first epoch: a good init has 0.9 ≤ Var[x_L]/Var[x_0] ≤ 1.1",
        "bert_init",
    ),
    Item(
        "eq. (81)",
        "annotated",
        "10.3",
        "numeric",
        "Gradient-ratio check: a good init has 0.3 ≤ ‖∇W_0‖/‖∇W_L‖ ≤ 3.0",
        "bert_init",
    ),
    Item(
        "claim §10.3.1",
        "annotated",
        "10.3",
        "numeric",
        "With a suitable init the loss falls smoothly over the first 1000 steps, without violent oscillation",
        "bert_init",
        not_checked=(
            "the book's MLM runs are a few hundred steps (fewer than 1,000) and no verdict measures how smoothly "
            "their loss falls"
        ),
    ),
    Item(
        "claim §10.3.2",
        "annotated",
        "10.3",
        "qualitative",
        "If the loss oscillates violently, reduce σ or lengthen the warmup",
        "bert_init",
        not_checked=(
            "tuning advice; no verdict measures loss oscillation against σ or warmup length. The Post-Norm vs "
            "Pre-Norm and increment-explosion chapters measure Post-LN with and without warmup ({{Post-LN needs "
            "warmup}})"
        ),
    ),
    Item(
        "claim §10.3.3",
        "annotated",
        "10.3",
        "qualitative",
        "If the shallow layers' gradients are too small, reduce σ",
        "bert_init",
    ),
    Item(
        "claim §10.3.4",
        "annotated",
        "10.3",
        "qualitative",
        "If convergence is too slow, increase σ slightly, but not beyond 1/√d",
        "bert_init",
        not_checked=(
            "tuning advice; the MLM sweep (Experiment 2) ranks 0.01, 0.02, 0.0361 and 0.05 once, at one learning "
            "rate (verdict on eq. (74)), but no verdict tests this rule"
        ),
    ),
    # ---- 11. 与其他技术的关联 ----
    # 11.1 初始化与学习率的协同
    Item(
        "eq. (82)",
        "annotated",
        "11.1",
        "scaling",
        "The optimal learning rate depends on init and depth: η_optimal ∝ 1/(σ√L)",
        "increment_explosion",
    ),
    Item(
        "claim §11.1.1",
        "annotated",
        "11.1",
        "qualitative",
        "Rationale offered for eq. (82): the update step should match the initial signal strength",
        "increment_explosion",
        "the source's one-line rationale for eq. (82); the claim to check is eq. (82)",
    ),
    # 11.2 初始化与Batch Size
    Item(
        "claim §11.2.1",
        "annotated",
        "11.2",
        "qualitative",
        "Large-batch training needs a larger learning rate, which can be compensated by adjusting the initialization",
        "bert_init",
        not_checked=(
            "no batch-size sweep is run: each budget uses one batch size, so neither the learning-rate nor "
            "the init compensation is measured"
        ),
    ),
    Item(
        "eq. (83)",
        "annotated",
        "11.2",
        "scaling",
        "Init std for a larger batch: σ_large_batch = σ_small_batch · √(B_small/B_large)",
        "bert_init",
    ),
    # 11.3 混合精度训练的影响
    Item(
        "claim §11.3.1",
        "annotated",
        "11.3",
        "qualitative",
        "FP16 training raises the risk of gradient underflow",
        "bert_init",
    ),
    Item(
        "eq. (84)",
        "annotated",
        "11.3",
        "numeric",
        "For FP16 training use σ_fp16 ≥ 0.015 so that a too-small init does not cause underflow",
        "bert_init",
    ),
    Item(
        "claim §11.3.2",
        "annotated",
        "11.3",
        "qualitative",
        "Summary: 0.02 balances variance, gradient flow and numerical stability; near-optimal for 12-layer Post-LN",
        "bert_init",
    ),
)
