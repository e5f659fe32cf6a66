{#- Layer of a model from its folder, else its name prefix:
      staging       folder staging/stg/base, or prefix stg_ / base_
      intermediate  folder intermediate/int, or prefix int_
      marts         folder marts/mart/core/reporting, or prefix fct_ / fact_ / dim_ / mart_ / rpt_ / agg_
      other         anything else
    The first folder (from the model path's top) that names a layer wins. -#}
{% macro ade_model_layer(path, name) %}
  {%- set folders = {
      'staging': 'staging', 'stg': 'staging', 'base': 'staging',
      'intermediate': 'intermediate', 'int': 'intermediate',
      'marts': 'marts', 'mart': 'marts', 'core': 'marts', 'reporting': 'marts',
  } -%}
  {%- set parts = path.replace('\\', '/').split('/')[:-1] -%}
  {%- for part in parts -%}
    {%- if part|lower in folders -%}{{ return(folders[part|lower]) }}{%- endif -%}
  {%- endfor -%}
  {%- set n = name|lower -%}
  {%- if n.startswith('stg_') or n.startswith('base_') -%}{{ return('staging') }}
  {%- elif n.startswith('int_') -%}{{ return('intermediate') }}
  {%- elif n.startswith(('fct_', 'fact_', 'dim_', 'mart_', 'rpt_', 'agg_')) -%}{{ return('marts') }}
  {%- endif -%}
  {{- return('other') -}}
{% endmacro %}
