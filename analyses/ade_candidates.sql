{#- adegen: the ranked task candidates of this project. `dbt compile` renders them to
    target/compiled/adegen/analyses/ade_candidates.sql (summary as comments + one row each). -#}
{{ adegen.ade_candidates_sql(top_n=var('ade_top_n', 10)) }}
