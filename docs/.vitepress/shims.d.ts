// Single-file components, for the TypeScript that imports them (VitePress compiles them).
declare module '*.vue' {
  import type { DefineComponent } from 'vue';

  const component: DefineComponent;
  export default component;
}

// Style sheets the theme imports for their effect.
declare module '*.css';
