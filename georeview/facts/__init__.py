"""Facts stage: what the rules read, built from the submission, the measures and the Village.

Plan contents (:mod:`.plan`) and the site map (:mod:`.sitemap`) turn declared sections of
``submission.toml`` into facts.
"""
